#!/usr/bin/env bash
# Times `aoa-compile --emit=mappings --queries` on the DeepSeek-V3-sized
# conversion with 677,376 queries (one per destination shard, repeated from
# the first to reach the count a DeepSeek-V3-sized load asks), with baselines
# measured in the same run: loading the two metadata files alone, and the
# same conversion answering every destination shard without a query file.
# Usage:
#   bash bench/queries_bench.sh [BUILD_DIR] [OUT_DIR] [QUERY_COUNT]
# OUT_DIR (default /tmp/aoa-bench) receives ~350 MB of metadata, ~100 MB of
# queries and ~1.3 GB of mappings JSON (two outputs).
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench}"
count="${3:-677376}"
compile="$build_dir/bin/aoa-compile"
config="$(dirname "$0")/deepseek_v3_tp8ep8_to_tp4ep16.aoa"
queries="$out_dir/queries-$count.json"
mkdir -p "$out_dir"

source "$(dirname "$0")/common.sh"
print_machine
if [[ ! -f "$queries" ]]; then
  # The generator is deterministic: it rewrites the same src.json/dst.json.
  "$build_dir/bin/aoa-bench-gen-metadata" --src "$out_dir/src.json" \
    --dst "$out_dir/dst.json" --queries "$queries" --query-count "$count"
fi
ensure_deepseek_metadata "$build_dir" "$out_dir"
cat "$queries" > /dev/null
ls -l "$queries"

for run in 1 2 3; do
  echo "== run $run"
  /usr/bin/time -f "baseline: load both metadata files (--keep): %e s, peak RSS %M KiB" \
    "$build_dir/bin/aoa-bench-load-metadata" --keep "$out_dir/src.json" "$out_dir/dst.json" > /dev/null
  /usr/bin/time -f "baseline: --emit=mappings, every destination shard: %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" --emit=mappings \
    -o "$out_dir/mappings.json"
  /usr/bin/time -f "--emit=mappings --queries ($count queries): %e s, peak RSS %M KiB" \
    "$compile" "$config" --src "$out_dir/src.json" --dst "$out_dir/dst.json" --emit=mappings \
    --queries "$queries" -o "$out_dir/mappings-queries.json" --time-passes \
    2> "$out_dir/time-passes-queries.txt" || { cat "$out_dir/time-passes-queries.txt"; exit 1; }
  grep -E "Total Execution Time|--emit=mappings --queries" "$out_dir/time-passes-queries.txt"
done
grep -E "^ +[0-9]" "$out_dir/time-passes-queries.txt"
grep -c '"query"' "$out_dir/mappings-queries.json" | sed 's/^/queries answered: /'
