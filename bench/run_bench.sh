#!/usr/bin/env bash
# Throughput of aoa-run (local backend) on a Llama-like checkpoint of 10
# layers (3.76 GiB of weights, bf16) converted from TP2 to TP4, against a
# plain copy of the same files measured in the same run (cp, then sync, since
# aoa-run makes every file durable before it reports success):
#   relayout:  only the sharding changes (bench/relayout.aoa);
#   transform: also a transpose of every down projection and a cast of every
#              attention output projection to float16 (bench/transform.aoa);
#   merge:     the relayout's output converted back from TP4 to TP2, where
#              column-split tensors are assembled from strided row pieces.
# Usage: bash bench/run_bench.sh [BUILD_DIR] [OUT_DIR] [LAYERS]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-run-bench}"
layers="${3:-10}"
bin="$build_dir/bin"
here="$(dirname "$0")"
mkdir -p "$out_dir"

source "$here/common.sh"
print_machine
df -h "$out_dir" | tail -1

echo "== layouts and plans ($layers layers)"
python3 "$here/gen_llama_layouts.py" "$out_dir" --layers "$layers"
python3 "$here/gen_llama_layouts.py" "$out_dir" --layers "$layers" --tp 4 --transposed-down \
  --o-proj-dtype float16 # the transform destination
for layout in llama_tp2 llama_tp4 llama_tp4_t; do
  "$bin/aoa-layout" "$out_dir/$layout.spec.json" -o "$out_dir/$layout.json"
done
"$bin/aoa-compile" "$here/relayout.aoa" --src "$out_dir/llama_tp2.json" \
  --dst "$out_dir/llama_tp4.json" -o "$out_dir/relayout.plan" 2> "$out_dir/relayout-compile.txt"
"$bin/aoa-compile" "$here/transform.aoa" --src "$out_dir/llama_tp2.json" \
  --dst "$out_dir/llama_tp4_t.json" -o "$out_dir/transform.plan" 2> "$out_dir/transform-compile.txt"
"$bin/aoa-compile" "$here/relayout.aoa" --src "$out_dir/llama_tp4.json" \
  --dst "$out_dir/llama_tp2.json" -o "$out_dir/merge.plan" 2> "$out_dir/merge-compile.txt"
grep -E "^(total|network)" "$out_dir/relayout-compile.txt"

echo "== source checkpoint (aoa-shard --fill=random)"
rm -rf "$out_dir/src"
/usr/bin/time -f "aoa-shard: %e s, peak RSS %M KiB" \
  "$bin/aoa-shard" "$out_dir/llama_tp2.json" --fill=random:1 -o "$out_dir/src"
sync
du -sb "$out_dir/src"

# The machine's write throughput drifts (page cache, writeback, neighbours),
# so every conversion is timed right after its own plain-copy baseline.
timed() { # LABEL COMMAND...
  local label="$1"; shift
  sync
  /usr/bin/time -f "$label: %e s wall, %U s user, %S s sys, peak RSS %M KiB" "$@"
  sync
}
copy_baseline() { # SRC
  rm -rf "$out_dir/copy"
  timed "plain copy (cp -r, then sync)" bash -c "cp -r '$1' '$out_dir/copy' && sync"
  rm -rf "$out_dir/copy"
}
for run in 1 2; do
  echo "== run $run"
  rm -rf "$out_dir/relayout" "$out_dir/transform" "$out_dir/merge"
  copy_baseline "$out_dir/src"
  timed "aoa-run relayout" "$bin/aoa-run" "$out_dir/relayout.plan" \
    --src-dir "$out_dir/src" --dst-dir "$out_dir/relayout" --progress=none
  copy_baseline "$out_dir/src"
  timed "aoa-run transform" "$bin/aoa-run" "$out_dir/transform.plan" \
    --src-dir "$out_dir/src" --dst-dir "$out_dir/transform" --progress=none
  copy_baseline "$out_dir/relayout"
  timed "aoa-run merge" "$bin/aoa-run" "$out_dir/merge.plan" \
    --src-dir "$out_dir/relayout" --dst-dir "$out_dir/merge" --progress=none
done

echo "== the converted checkpoint holds the source's data"
/usr/bin/time -f "aoa-compare: %e s, peak RSS %M KiB" \
  "$bin/aoa-compare" "$out_dir/src" "$out_dir/relayout"
"$bin/aoa-compare" "$out_dir/src" "$out_dir/merge"
rm -rf "$out_dir/copy"
