#!/bin/sh
# kill -9 trials of aoa-run: SIGKILL at a random fault point
# (AOA_FAULT_INJECT=kill:OP:N) or after a random delay, then the same command
# again, compared byte for byte with an uninterrupted run. See docs/testing.md.
#   scripts/kill-trials.sh [--trials 50] [--seed 1] [--scenario big|tp|hf] [--mode mixed|point|delay] [--backend mpi]
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/../test/faults/fault_trials.py" kill "$@"
