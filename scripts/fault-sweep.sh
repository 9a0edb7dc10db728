#!/bin/sh
# Fault-injection sweeps of aoa-run: a conversion run once per read, write,
# fsync, rename and mpi message it makes, with that one failing (EIO, through
# AOA_FAULT_INJECT); each must exit 1 with a clear error, leave DST clean, and
# be finished by the same command to the uninterrupted run's bytes.
# See docs/testing.md.
#   scripts/fault-sweep.sh [--scenario tp,hf] [--backend mpi] [--overwrite] [--bin build/bin] [-v]
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/../test/faults/fault_trials.py" sweep "$@"
