#!/usr/bin/env bash
# Runs the CPU transform kernels benchmark (bench/transform_kernels_bench.cpp,
# Google Benchmark, one thread) and prints each kernel's throughput as a ratio
# to the memcpy of the same source bytes measured in the same run ("ratio":
# source bytes per second over the memcpy's copied bytes per second), and
# its bytes moved (source bytes read + destination bytes written) per second
# as a ratio to the same memcpy's bytes moved (twice its copied bytes):
# "bytes-moved ratio", which does not cap a widening below 1.
# Usage: bash bench/kernels_bench.sh [BUILD_DIR] [REPETITIONS]
set -euo pipefail
build_dir="${1:-build}"
repetitions="${2:-5}"
bench="$build_dir/bin/aoa-bench-transform-kernels"
[[ -x "$bench" ]] || bench="$build_dir/bench/aoa-bench-transform-kernels"
source "$(dirname "$0")/common.sh"
print_machine
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
"$bench" --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true \
  --benchmark_format=json > "$json"
python3 - "$json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
median = {r["run_name"]: r for r in runs if r.get("aggregate_name") == "median"}
if not median:  # one repetition: Google Benchmark writes the run, no aggregates
    median = {r["run_name"]: r for r in runs if r.get("run_type") == "iteration"}
base = {"float32": median["memcpyOf/float32"]["bytes_per_second"],
        "bfloat16": median["memcpyOf/bfloat16"]["bytes_per_second"]}
# The source's dtype starts the name after the kind (and "transpose_"); 4-
# and 8-byte sources are compared with the float32 memcpy, 1- and 2-byte
# ones with the bfloat16 memcpy (the same GB/s).
def source_dtype(name):
    kernel = name.split("/")[1]
    for prefix in ("transpose_", "half_columns_"):
        kernel = kernel[len(prefix):] if kernel.startswith(prefix) else kernel
    wide = ("float32", "float64", "int32", "int64", "uint32", "uint64")
    return "float32" if kernel.startswith(wide) else "bfloat16"
moved_base = {"float32": median["memcpyOf/float32"]["bytes_moved"],
              "bfloat16": median["memcpyOf/bfloat16"]["bytes_moved"]}
print("| kernel | median time (ms) | source GB/s | memcpy of the same bytes GB/s | ratio "
      "| bytes moved GB/s | memcpy bytes moved GB/s | bytes-moved ratio |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, r in median.items():
    dtype = source_dtype(name) if not name.startswith("memcpyOf") else name.split("/")[1]
    bps = r["bytes_per_second"]
    moved = r["bytes_moved"]
    print("| %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
          name, r["real_time"], bps / 1e9, base[dtype] / 1e9, bps / base[dtype],
          moved / 1e9, moved_base[dtype] / 1e9, moved / moved_base[dtype]))
PY
