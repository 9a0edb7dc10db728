#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds aoa, and runs it on the bundled
# example configs (examples/): each config is parsed and its statements are
# printed. Usage: bash scripts/quickstart.sh [BUILD_DIR]
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
