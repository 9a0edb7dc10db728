#!/bin/sh
# Long differential runs: random AOA conversions through aoa-compile + aoa-run
# compared byte for byte with the naive reference interpreter
# (test/differential/aoaref.py). See docs/testing.md.
#   scripts/difftest.sh --cases 10000 --seed 1 [--build build] [--features +fusedperm,-reverse] [--jobs N]
# On the first failure the case is shrunk and printed as a reproducer.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/../test/differential/difftest.py" "$@"
