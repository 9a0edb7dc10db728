#!/usr/bin/env bash
# Times `aoa-compile --emit=mappings` (and --emit=mappings-count) on the DeepSeek-V3-sized conversion
# (TP8 x EP8 -> TP4 x EP16, fused FFN statements for every layer and expert),
# with the baselines of bench/RESULTS.md measured in the same run. Usage:
#   bash bench/mappings_bench.sh [BUILD_DIR] [OUT_DIR]
# OUT_DIR (default /tmp/aoa-bench) receives ~350 MB of metadata and ~610 MB of
# mappings JSON.
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench}"
compile="$build_dir/bin/aoa-compile"
config="$(dirname "$0")/deepseek_v3_tp8ep8_to_tp4ep16.aoa"
mkdir -p "$out_dir"

source "$(dirname "$0")/common.sh"
print_machine
ensure_deepseek_metadata "$build_dir" "$out_dir"

for run in 1 2 3; do
  echo "== run $run"
  /usr/bin/time -f "load both files (--keep): %e s, peak RSS %M KiB" \
    "$build_dir/bin/aoa-bench-load-metadata" --keep "$out_dir/src.json" "$out_dir/dst.json" > /dev/null
  /usr/bin/time -f "--emit=ir: %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" --emit=ir -o "$out_dir/ir.txt"
  /usr/bin/time -f "--emit=mappings: %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" --emit=mappings \
    -o "$out_dir/mappings.json" --time-passes 2> "$out_dir/time-passes.txt" || { cat "$out_dir/time-passes.txt"; exit 1; }
  tail -1 "$out_dir/time-passes.txt"
  /usr/bin/time -f "--emit=mappings-count (answers counted, not formatted): %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" --emit=mappings-count
  /usr/bin/time -f "cp of the mappings file: %e s" cp "$out_dir/mappings.json" "$out_dir/mappings.copy.json"
  rm -f "$out_dir/mappings.copy.json"
done
grep -E "^ +[0-9]" "$out_dir/time-passes.txt"
ls -l "$out_dir/mappings.json"
grep -c '"query"' "$out_dir/mappings.json" | sed 's/^/queries: /'
grep -c '"target"' "$out_dir/mappings.json" | sed 's/^/entries: /'
