#!/usr/bin/env bash
# Calibrates `aoa-plan estimate` on this machine: measures the resources the
# model needs (reading the source files as aoa-run reads them, writing and
# syncing files, copying memory), writes them as a cluster spec of one node,
# then compares the estimate of the run benchmark's plans with aoa-run's
# measured times (local and mpi backends), run after run.
# Run bench/run_bench.sh first: it writes the plans and the source checkpoint
# into OUT_DIR.
# Usage: bash bench/estimate_calibration.sh [BUILD_DIR] [OUT_DIR] [RUNS]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-run-bench}"
runs="${3:-2}"
bin="$build_dir/bin"
source "$(dirname "$0")/common.sh"
print_machine
setup_mpirun

seconds() { # COMMAND...: wall seconds of COMMAND, to 3 decimals
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
gbps() { awk -v bytes="$1" -v s="$2" 'BEGIN { printf "%.3f", bytes / s / 1e9 }'; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== this machine's resources (median of 3 measurements each)"
src_bytes=$(du -sb "$out_dir/src" | cut -f1)
# Reads: the source as aoa-run finds it in the timed runs below, in the page
# cache (the first read puts it there).
cat "$out_dir"/src/*.safetensors > /dev/null
read_s=$(for i in 1 2 3; do seconds bash -c "cat '$out_dir'/src/*.safetensors > /dev/null"; echo; done | median)
read_gbps=$(gbps "$src_bytes" "$read_s")
# Writes: the same bytes written and made durable, as aoa-run does.
write_s=$(for i in 1 2 3; do
  rm -rf "$out_dir/calibration-copy"
  sync
  seconds bash -c "cp -r '$out_dir/src' '$out_dir/calibration-copy' && sync"
  echo
done | median)
write_gbps=$(gbps "$src_bytes" "$write_s")
rm -rf "$out_dir/calibration-copy"
# A message inside the node and a transform: a memory copy.
copy_bytes=$((1 << 30))
mem_s=$(for i in 1 2 3; do
  seconds dd if=/dev/zero of=/dev/null bs=64M count=$((copy_bytes / (64 << 20))) status=none
  echo
done | median)
mem_gbps=$(gbps "$copy_bytes" "$mem_s")
echo "read (page cache): $read_gbps GB/s; write + sync: $write_gbps GB/s; memory copy: $mem_gbps GB/s" \
  "($src_bytes bytes)"
ranks=$("$bin/aoa-plan" summary "$out_dir/relayout.plan" | sed -n 's/^plan: \([0-9]*\) ranks.*/\1/p')
spec="$out_dir/this-machine.json"
cat > "$spec" <<EOF
{
  "ranks_per_node": $ranks,
  "disk_read_GBps": $read_gbps,
  "disk_write_GBps": $write_gbps,
  "nic_GBps": 1.0,
  "nvlink_GBps": $mem_gbps,
  "copy_GBps": $mem_gbps
}
EOF
cat "$spec"

echo "== predicted"
for plan in relayout transform merge; do
  "$bin/aoa-plan" estimate "$out_dir/$plan.plan" --cluster "$spec" > "$out_dir/$plan-estimate.txt"
  echo "$plan: $(head -1 "$out_dir/$plan-estimate.txt")"
  grep -E '^(bound|ideal lower bound):' "$out_dir/$plan-estimate.txt"
done

echo "== measured (each run then sync, as the model's writes include the sync)"
for run in $(seq "$runs"); do
  for plan in relayout transform merge; do
    source_dir="$out_dir/src"
    [[ $plan == merge ]] && source_dir="$out_dir/relayout-calibration"
    rm -rf "$out_dir/$plan-calibration"
    sync
    s=$(seconds "$bin/aoa-run" "$out_dir/$plan.plan" --src-dir "$source_dir" \
      --dst-dir "$out_dir/$plan-calibration" --progress=none)
    echo "run $run, $plan, local: $s s"
  done
  rm -rf "$out_dir/mpi-calibration"
  sync
  s=$(seconds mpirun "${mpirun_flags[@]}" -np "$ranks" "$bin/aoa-run" "$out_dir/relayout.plan" \
    --backend=mpi --src-dir "$out_dir/src" --dst-dir "$out_dir/mpi-calibration" --progress=none)
  echo "run $run, relayout, mpi (mpirun -np $ranks): $s s"
done
rm -rf "$out_dir"/*-calibration
