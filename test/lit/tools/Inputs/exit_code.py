#!/usr/bin/env python3
"""Runs a command and then prints `exit code: N`, so that a lit test can
check an exact exit code (lit's `not` only knows zero and non-zero).

  exit_code.py COMMAND [ARG ...]
"""
import subprocess
import sys

sys.stdout.flush()
code = subprocess.call(sys.argv[1:])
print("exit code: %d" % code)
