#!/usr/bin/env bash
# The mpi backend against the local backend on the same source: the relayout
# of bench/run_bench.sh (3.8 GiB, TP2 -> TP4, 4 ranks), run alternately, each
# followed by sync: the local backend and the mpi backend on the plan of
# run_bench.sh, then the mpi backend on the same conversion compiled with
# --shared-src (every rank reads what it writes itself, so nothing passes
# between ranks; right here, where all ranks share one host). Every output is
# compared with the local backend's. Run bench/run_bench.sh first (it writes
# the plan, the layouts and the source checkpoint into OUT_DIR).
# Usage: bash bench/mpi_bench.sh [BUILD_DIR] [OUT_DIR] [RUNS] [WORK_DIR]
# WORK_DIR (default OUT_DIR) receives the --shared-src plan and the outputs.
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-run-bench}"
runs="${3:-2}"
work_dir="${4:-$out_dir}"
bin="$build_dir/bin"
here="$(dirname "$0")"
source "$here/common.sh"
print_machine
setup_mpirun
mkdir -p "$work_dir"
"$bin/aoa-compile" "$here/relayout.aoa" --src "$out_dir/llama_tp2.json" \
  --dst "$out_dir/llama_tp4.json" --shared-src -o "$work_dir/relayout-shared.plan" \
  2> "$work_dir/relayout-shared-compile.txt"
grep -E "^(total|network)" "$work_dir/relayout-shared-compile.txt"
for run in $(seq "$runs"); do
  echo "== run $run"
  for backend in local mpi mpi-shared; do
    rm -rf "$work_dir/by-$backend"
    sync
    case $backend in
    local)
      /usr/bin/time -f "local: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
        "$bin/aoa-run" "$out_dir/relayout.plan" --src-dir "$out_dir/src" \
        --dst-dir "$work_dir/by-local" --progress=none
      ;;
    mpi)
      /usr/bin/time -f "mpi (mpirun -np 4): %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
        mpirun "${mpirun_flags[@]}" -np 4 "$bin/aoa-run" "$out_dir/relayout.plan" \
        --backend=mpi --src-dir "$out_dir/src" --dst-dir "$work_dir/by-mpi" --progress=none
      ;;
    mpi-shared)
      /usr/bin/time -f "mpi, --shared-src plan (mpirun -np 4): %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
        mpirun "${mpirun_flags[@]}" -np 4 "$bin/aoa-run" "$work_dir/relayout-shared.plan" \
        --backend=mpi --src-dir "$out_dir/src" --dst-dir "$work_dir/by-mpi-shared" --progress=none
      ;;
    esac
    sync
  done
  for backend in mpi mpi-shared; do
    diff -r "$work_dir/by-local" "$work_dir/by-$backend" && echo "identical outputs: local, $backend"
  done
done
rm -rf "$work_dir/by-local" "$work_dir/by-mpi" "$work_dir/by-mpi-shared"
