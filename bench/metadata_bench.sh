#!/usr/bin/env bash
# Generates DeepSeek-V3-sized shard metadata and times loading it, with the
# baselines of bench/RESULTS.md. Usage:
#   bash bench/metadata_bench.sh [BUILD_DIR] [OUT_DIR]
# BUILD_DIR must have aoa-bench-gen-metadata and aoa-bench-load-metadata built;
# OUT_DIR (default /tmp/aoa-bench) receives ~350 MB of JSON.
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench}"
gen="$build_dir/bin/aoa-bench-gen-metadata"
load="$build_dir/bin/aoa-bench-load-metadata"
mkdir -p "$out_dir"

echo "== machine"
echo "nproc: $(nproc)"
lscpu | grep 'Model name' || true
grep PRETTY_NAME /etc/os-release || true
uname -r

echo "== generate"
/usr/bin/time -f "generator: %e s, peak RSS %M KiB" \
  "$gen" --src "$out_dir/src.json" --dst "$out_dir/dst.json"
ls -l "$out_dir/src.json" "$out_dir/dst.json"

for file in "$out_dir/src.json" "$out_dir/dst.json"; do
  echo "== $file"
  cat "$file" > /dev/null # warm the page cache
  /usr/bin/time -f "cat > /dev/null: %e s" cat "$file" > /dev/null
  for mode in read map simdjson-walk nlohmann-sax load; do
    echo "-- --mode=$mode"
    "$load" --mode="$mode" --repeat=5 "$file"
  done
done
