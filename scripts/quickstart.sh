#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds aoa, and runs it on the bundled
# examples: each config is parsed; then a small Llama-like checkpoint (TP2,
# fused gate/up FFN, optimizer states) is generated, converted to TP4 with
# examples/llama_fused_ffn.json, verified against its hashes, and converted
# back to TP2 to check that the original bytes come back.
# Usage: bash scripts/quickstart.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"

bash scripts/setup-debian.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j "$(nproc)"

for config in examples/*.json; do
  echo "== aoa-compile $config --emit=ast"
  "$build_dir/bin/aoa-compile" "$config" --emit=ast
done

out_dir="$build_dir/quickstart"
rm -rf "$out_dir"
mkdir -p "$out_dir"
bin="$build_dir/bin"
echo "== aoa-layout: Llama TP2 and TP4 layouts (4 layers, fused gate/up FFN, optimizer states)"
"$bin/aoa-layout" examples/layouts/llama_tp2.json -o "$out_dir/llama_tp2.json"
"$bin/aoa-layout" examples/layouts/llama_tp4.json -o "$out_dir/llama_tp4.json"
echo "== aoa-shard: a TP2 checkpoint with deterministic random weights"
"$bin/aoa-shard" "$out_dir/llama_tp2.json" --fill=random:1 -o "$out_dir/tp2"
echo "== aoa-compile examples/llama_fused_ffn.json: TP2 -> TP4 transfer plan"
"$bin/aoa-compile" examples/llama_fused_ffn.json \
  --src "$out_dir/llama_tp2.json" --dst "$out_dir/llama_tp4.json" -o "$out_dir/tp2_to_tp4.plan"
echo "== aoa-run: convert, then re-read every file and check its hashes"
"$bin/aoa-run" "$out_dir/tp2_to_tp4.plan" --src-dir "$out_dir/tp2" --dst-dir "$out_dir/tp4" --verify
echo "== check: the reverse conversion (TP4 -> TP2) gives back the original checkpoint"
"$bin/aoa-compile" examples/llama_fused_ffn.json --reverse \
  --src "$out_dir/tp4/metadata.json" --dst "$out_dir/llama_tp2.json" -o "$out_dir/tp4_to_tp2.plan" 2> /dev/null
"$bin/aoa-run" "$out_dir/tp4_to_tp2.plan" --src-dir "$out_dir/tp4" --dst-dir "$out_dir/tp2_again" --progress=none
"$bin/aoa-compare" "$out_dir/tp2" "$out_dir/tp2_again"
echo "converted checkpoint: $out_dir/tp4 ($(ls "$out_dir/tp4" | wc -l) files)"
