#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds aoa, and runs it on the bundled
# examples: each config is parsed; then a small Hugging Face-style Llama
# directory (config.json, index, several bfloat16 shards, tokenizer files)
# is generated, converted to TP4 with fused QKV and gate/up by aoa-convert,
# verified against its hashes, and converted back to a Hugging Face
# directory whose tensors and files must equal the original's.
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
config=examples/hf_llama_fused_qkv_ffn.aoa
echo "== a Hugging Face-style Llama-like model: 4 layers, 32 query / 8 KV heads, bfloat16, several shards + index"
python3 scripts/make-hf-model.py "$out_dir/hf" --heads 32 --kv-heads 8
echo "== aoa-scan: what aoa sees in it (headers only)"
"$bin/aoa-scan" "$out_dir/hf" -o "$out_dir/hf.metadata.json"
echo "== aoa-convert: Hugging Face -> TP4 with fused QKV (GQA) and fused gate/up ($config,"
echo "   examples/layouts/hf_llama_fused_tp4.json: column-parallel qkv/gate_up, row-parallel o/down)"
"$bin/aoa-convert" "$out_dir/hf" "$out_dir/tp4" --config "$config" \
  --layout examples/layouts/hf_llama_fused_tp4.json --verify
echo "== aoa-convert --reverse --to-hf: TP4 -> a Hugging Face directory again (files of at most 1MB)"
"$bin/aoa-convert" "$out_dir/tp4" "$out_dir/hf_again" --config "$config" --reverse --to-hf \
  --max-shard-size 1MB --verify
echo "== check: every tensor of the round trip equals the original; config and tokenizer files came along"
"$bin/aoa-compare" "$out_dir/hf" "$out_dir/hf_again"
for file in config.json generation_config.json tokenizer.json tokenizer_config.json; do
  cmp "$out_dir/hf/$file" "$out_dir/hf_again/$file"
done
echo "TP4 checkpoint: $out_dir/tp4 ($(ls "$out_dir/tp4" | wc -l) files; plan in $out_dir/tp4/.aoa)"
echo "Hugging Face directory: $out_dir/hf_again ($(ls "$out_dir/hf_again" | wc -l) files)"

# The Python module (when this build has it): README.md's lines of its section "Python", run as written (with
# this build directory), with the interpreter the module was built for.
if ls "$build_dir"/python/aoa/_aoa*.so >/dev/null 2>&1; then
  python_exe=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
  echo "== Python (README.md, section Python): rank 1's TP4 tensors loaded into numpy arrays, no files written"
  sed -n '/^## Python$/,/^## /p' README.md | sed -n '/^```python$/,/^```$/p' | sed '1d;$d' |
    sed "s|\"build/|\"$build_dir/|g" | PYTHONPATH="$build_dir/python" "${python_exe:-python3}" -
fi
