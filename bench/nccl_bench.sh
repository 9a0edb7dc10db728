#!/usr/bin/env bash
# The nccl backend against the local backend on one GPU: a one-rank plan of
# the Llama-like checkpoint of bench/run_bench.sh (TP1 -> TP1 with every down
# projection transposed and every attention output projection cast to
# float16, bench/transform.aoa), so that the GPU does the work of the
# transform: aoa-run --backend=local, then --backend=nccl, alternately, each
# after sync, outputs compared with diff -r. Exits 0 with a message when
# this machine has no usable GPU or the build has no nccl backend.
# Usage: bash bench/nccl_bench.sh [BUILD_DIR] [OUT_DIR] [LAYERS] [RUNS]
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-nccl-bench}"
layers="${3:-10}"
runs="${4:-2}"
bin="$build_dir/bin"
here="$(dirname "$0")"
source "$here/common.sh"
print_machine
if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "nccl_bench: no GPU on this machine (nvidia-smi lists none); nothing measured"
  exit 0
fi
nvidia-smi -L
mkdir -p "$out_dir"

echo "== layouts, plan and source checkpoint ($layers layers, one rank)"
python3 "$here/gen_llama_layouts.py" "$out_dir" --layers "$layers" --tp 1
python3 "$here/gen_llama_layouts.py" "$out_dir" --layers "$layers" --tp 1 --transposed-down \
  --o-proj-dtype float16
for layout in llama_tp1 llama_tp1_t; do
  "$bin/aoa-layout" "$out_dir/$layout.spec.json" -o "$out_dir/$layout.json"
done
"$bin/aoa-compile" "$here/transform.aoa" --src "$out_dir/llama_tp1.json" \
  --dst "$out_dir/llama_tp1_t.json" -o "$out_dir/transform1.plan" 2> "$out_dir/transform1-compile.txt"
head -1 "$out_dir/transform1-compile.txt"
rm -rf "$out_dir/src"
"$bin/aoa-shard" "$out_dir/llama_tp1.json" --fill=random:1 -o "$out_dir/src"
sync

for run in $(seq "$runs"); do
  echo "== run $run"
  for backend in local nccl; do
    rm -rf "$out_dir/by-$backend"
    sync
    /usr/bin/time -f "$backend: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
      "$bin/aoa-run" "$out_dir/transform1.plan" --backend="$backend" \
      --src-dir "$out_dir/src" --dst-dir "$out_dir/by-$backend" --progress=none
    sync
  done
  diff -r "$out_dir/by-local" "$out_dir/by-nccl" && echo "identical outputs"
done
rm -rf "$out_dir/by-local" "$out_dir/by-nccl"
