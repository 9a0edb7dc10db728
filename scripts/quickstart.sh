#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds aoa, and runs it on the bundled
# examples: each config is parsed, and the Llama example is compiled into a
# transfer plan from a TP2 layout to a TP4 layout (both expanded from device
# meshes by aoa-layout). Usage: bash scripts/quickstart.sh [BUILD_DIR]
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
mkdir -p "$out_dir"
echo "== aoa-layout: Llama TP2 and TP4 layouts (4 layers, optimizer states)"
"$build_dir/bin/aoa-layout" examples/layouts/llama_tp2.json -o "$out_dir/llama_tp2.json"
"$build_dir/bin/aoa-layout" examples/layouts/llama_tp4.json -o "$out_dir/llama_tp4.json"
echo "== aoa-compile examples/llama_fused_ffn.json: TP2 -> TP4 transfer plan"
"$build_dir/bin/aoa-compile" examples/llama_fused_ffn.json \
  --src "$out_dir/llama_tp2.json" --dst "$out_dir/llama_tp4.json" -o "$out_dir/llama_tp2_to_tp4.plan"
echo "plan written to $out_dir/llama_tp2_to_tp4.plan ($(wc -l < "$out_dir/llama_tp2_to_tp4.plan") lines)"
