#!/usr/bin/env bash
# Times `aoa-compile --emit=plan` (the default: the binary plan) on the
# DeepSeek-V3-sized conversion with 1 and 2 threads, RUNS times each, against
# loading the metadata alone (the baseline) in the same run, interleaved; prints
# the best and median wall time and peak RSS of each, the last run's
# `--time-passes` per thread count, and once `--emit=plan-text` for the size of
# the text form.
# Usage: bash bench/plan_bench.sh [BUILD_DIR] [OUT_DIR] [RUNS]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench}"
runs="${3:-3}"
compile="$build_dir/bin/aoa-compile"
config="$(dirname "$0")/deepseek_v3_tp8ep8_to_tp4ep16.aoa"
mkdir -p "$out_dir"

source "$(dirname "$0")/common.sh"
print_machine
ensure_deepseek_metadata "$build_dir" "$out_dir"

times="$out_dir/plan-times.txt"
: > "$times"
for run in $(seq "$runs"); do
  /usr/bin/time -a -o "$times" -f "load %e %M" \
    "$build_dir/bin/aoa-bench-load-metadata" --keep "$out_dir/src.json" "$out_dir/dst.json" > /dev/null
  for threads in 1 2; do
    /usr/bin/time -a -o "$times" -f "threads$threads %e %M" \
      "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" \
      -o "$out_dir/plan.bin" --threads "$threads" --time-passes \
      2> "$out_dir/plan-stderr-$threads.txt" || { tail "$out_dir/plan-stderr-$threads.txt"; exit 1; }
  done
done
echo "== wall s and peak RSS over $runs runs (best / median)"
python3 - "$times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, wall, kib = line.split()
    rows.setdefault(name, []).append((float(wall), int(kib)))
for name, values in rows.items():
    walls = [w for w, _ in values]
    mib = [k / 1024 for _, k in values]
    print(f"{name:9s} wall {min(walls):6.2f} / {statistics.median(walls):6.2f} s"
          f"   peak RSS {min(mib):7.0f} / {statistics.median(mib):7.0f} MiB")
PY
for threads in 1 2; do
  echo "== --time-passes, --threads $threads (last run)"
  grep -E "^ +[0-9.]+ \(" "$out_dir/plan-stderr-$threads.txt"
done
grep -E "^(plan|total|network):" "$out_dir/plan-stderr-1.txt"
ls -l "$out_dir/plan.bin"
/usr/bin/time -f "--emit=plan-text: %e s, peak RSS %M KiB" \
  "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" \
  --emit=plan-text -o "$out_dir/plan.txt" 2> "$out_dir/plan-text-stderr.txt"
tail -1 "$out_dir/plan-text-stderr.txt"
ls -l "$out_dir/plan.txt"
