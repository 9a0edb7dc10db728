#!/usr/bin/env bash
# The mpi backend against the local backend on the same plan and source:
# the relayout of bench/run_bench.sh (3.8 GiB, TP2 -> TP4, 4 ranks), run
# alternately, each followed by sync. Run bench/run_bench.sh first (it
# writes the plan and the source checkpoint into OUT_DIR).
# Usage: bash bench/mpi_bench.sh [BUILD_DIR] [OUT_DIR] [RUNS]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-run-bench}"
runs="${3:-2}"
bin="$build_dir/bin"
source "$(dirname "$0")/common.sh"
print_machine
setup_mpirun
for run in $(seq "$runs"); do
  echo "== run $run"
  for backend in local mpi; do
    rm -rf "$out_dir/by-$backend"
    sync
    if [[ $backend == local ]]; then
      /usr/bin/time -f "local: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
        "$bin/aoa-run" "$out_dir/relayout.plan" --src-dir "$out_dir/src" \
        --dst-dir "$out_dir/by-local" --progress=none
    else
      /usr/bin/time -f "mpi (mpirun -np 4): %e s wall, %U s user, %S s sys, peak RSS of mpirun %M KiB" \
        mpirun "${mpirun_flags[@]}" -np 4 "$bin/aoa-run" "$out_dir/relayout.plan" \
        --backend=mpi --src-dir "$out_dir/src" --dst-dir "$out_dir/by-mpi" --progress=none
    fi
    sync
  done
  diff -r "$out_dir/by-local" "$out_dir/by-mpi" && echo "identical outputs"
done
rm -rf "$out_dir/by-local" "$out_dir/by-mpi"
