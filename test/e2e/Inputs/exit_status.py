#!/usr/bin/env python3
"""exit_status.py N COMMAND [ARG...]: runs COMMAND (its output passes
through) and succeeds only if it exits with status N. lit's `not` accepts any
failure; aoa-compare says "different" with 1 and "could not compare" with 2,
and a negative control must get the 1."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    sys.stderr.write("exit_status.py: %s exited with %d, expected %d\n"
                     % (sys.argv[2], got, want))
    sys.exit(1)
