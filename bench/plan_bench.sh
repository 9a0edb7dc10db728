#!/usr/bin/env bash
# Times `aoa-compile --emit=plan` (the default: the binary plan) on the
# DeepSeek-V3-sized conversion, with the metadata-loading baseline measured in
# the same run, then `--emit=plan-text` once for the size of the text form.
# Usage: bash bench/plan_bench.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench}"
compile="$build_dir/bin/aoa-compile"
config="$(dirname "$0")/deepseek_v3_tp8ep8_to_tp4ep16.aoa"
mkdir -p "$out_dir"

source "$(dirname "$0")/common.sh"
print_machine
ensure_deepseek_metadata "$build_dir" "$out_dir"

for run in 1 2; do
  echo "== run $run"
  /usr/bin/time -f "load both files (--keep): %e s, peak RSS %M KiB" \
    "$build_dir/bin/aoa-bench-load-metadata" --keep "$out_dir/src.json" "$out_dir/dst.json" > /dev/null
  /usr/bin/time -f "--emit=plan: %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" \
    -o "$out_dir/plan.bin" --time-passes 2> "$out_dir/plan-stderr.txt" || { tail "$out_dir/plan-stderr.txt"; exit 1; }
  tail -1 "$out_dir/plan-stderr.txt"
done
grep -E "^ +[0-9.]+ \(" "$out_dir/plan-stderr.txt"
grep -E "^(plan|total|network):" "$out_dir/plan-stderr.txt"
ls -l "$out_dir/plan.bin"
/usr/bin/time -f "--emit=plan-text: %e s, peak RSS %M KiB" \
  "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" \
  --emit=plan-text -o "$out_dir/plan.txt" 2> "$out_dir/plan-text-stderr.txt"
tail -1 "$out_dir/plan-text-stderr.txt"
ls -l "$out_dir/plan.txt"
