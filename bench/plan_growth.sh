#!/usr/bin/env bash
# Compiles one fixed MoE model's re-layout at growing world sizes and prints
# one row per size: shards, loading the metadata alone (the baseline),
# aoa-compile's wall and CPU time and peak RSS, the binary plan's size and
# the sizes of its per-rank sections, and the busiest rank's bytes. The
# layouts come from bench/gen_mesh_layouts.py through aoa-layout: source
# PP2 x EP2 x TP2, destination PP4 x EP2 x TP1, data parallel over the rest
# of the ranks.
# Usage: bash bench/plan_growth.sh [BUILD_DIR] [OUT_DIR] [RANKS...]
# BUILD_DIR needs aoa-layout, aoa-compile, aoa-bench-load-metadata and
# aoa-bench-plan-read (what one process of an mpi run reads: rank 1's part);
# OUT_DIR (default /tmp/aoa-growth) receives about 0.5 GB, 0.4 GB of it for
# 16,384 ranks.
# LAYERS (environment, default 16) sets the model's depth.
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-growth}"
if (($# > 2)); then
  ranks_list=("${@:3}")
else
  ranks_list=(8 64 512 4096 16384)
fi
layers="${LAYERS:-16}"
bench_dir="$(dirname "$0")"
config="$bench_dir/relayout.aoa"
mkdir -p "$out_dir"

source "$bench_dir/common.sh"
print_machine
echo "model: $layers layers (bench/gen_mesh_layouts.py), config $config"

# Prints the per-rank part of a row from the binary plan's directory
# (docs/plan-format.md, "Binary form": sections 5 + R are rank R's) and
# the summary aoa-compile printed: section bytes min / median / max, the
# busiest rank (most bytes read + sent + received + written) with its bytes
# and its section, and the largest section's rank with its bytes.
plan_stats() {
  python3 - "$1" "$2" <<'EOF'
import re, statistics, struct, sys
plan, summary = sys.argv[1], sys.argv[2]
with open(plan, "rb") as f:
    header = f.read(80)
    assert header[:8] == b"AOAPLAN\0", "not a binary plan"
    ranks, = struct.unpack_from("<I", header, 16)
    count, = struct.unpack_from("<I", header, 48)
    directory = f.read(24 * count)
sizes = [struct.unpack_from("<QQQ", directory, 24 * i)[1] for i in range(count)]
shared, sections = sum(sizes[:5]), sizes[5:]
moved = {}
for line in open(summary):
    cells = re.split(r"\s{2,}", line.strip())
    if len(cells) != 7 or not cells[0].isdigit():
        continue
    # "1.50 MiB (1572864 B)", or "512 B" below a KiB.
    exact = [int(re.search(r"(\d+) B\)?$", c).group(1)) for c in cells[2:6]]
    moved[int(cells[0])] = (sum(exact), int(cells[1]))
busiest = max(moved, key=lambda r: (moved[r][0], -r))
largest = max(range(ranks), key=lambda r: (sections[r], -r))
print("%d %d %d %d %d %d %d %d %d %d %d" % (
    shared, min(sections), statistics.median_low(sections), max(sections),
    busiest, moved[busiest][0], moved[busiest][1], sections[busiest],
    largest, moved.get(largest, (0, 0))[0], sections[largest]))
EOF
}

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

rows=()
per_shard=()
rank_reads=()
for ranks in "${ranks_list[@]}"; do
  dir="$out_dir/r$ranks"
  mkdir -p "$dir"
  echo "== $ranks ranks"
  python3 "$bench_dir/gen_mesh_layouts.py" "$dir" --ranks "$ranks" --layers "$layers"
  for side in src dst; do
    /usr/bin/time -f "aoa-layout $side: %e s, peak RSS %M KiB" \
      "$build_dir/bin/aoa-layout" "$dir/$side.spec.json" -o "$dir/$side.json"
  done
  src_shards=$(grep -c '"global_offset"' "$dir/src.json")
  dst_shards=$(grep -c '"global_offset"' "$dir/dst.json")
  ls -l "$dir/src.json" "$dir/dst.json"
  cat "$dir/src.json" "$dir/dst.json" > /dev/null # warm the page cache
  # Wall and CPU (user + system) time: the machine may be shared, and CPU
  # time is what a busy neighbour changes least.
  /usr/bin/time -f "%e %U %S %M" -o "$dir/load.time" \
    "$build_dir/bin/aoa-bench-load-metadata" --keep "$dir/src.json" "$dir/dst.json" > /dev/null
  /usr/bin/time -f "%e %U %S %M" -o "$dir/compile.time" \
    "$build_dir/bin/aoa-compile" "$config" --src "$dir/src.json" --dst "$dir/dst.json" \
    -o "$dir/plan.bin" --time-passes 2> "$dir/compile.stderr" || { tail "$dir/compile.stderr"; exit 1; }
  read -r load_s load_user load_sys load_kib < "$dir/load.time"
  read -r compile_s compile_user compile_sys compile_kib < "$dir/compile.time"
  load_cpu=$(awk -v u="$load_user" -v s="$load_sys" 'BEGIN { printf "%.2f", u + s }')
  compile_cpu=$(awk -v u="$compile_user" -v s="$compile_sys" 'BEGIN { printf "%.2f", u + s }')
  pass() { awk -v name="$1" '$NF == name { print $1 }' "$dir/compile.stderr"; }
  resolve_s=$(pass resolve-shard-sources)
  schedule_s=$(pass schedule)
  verify_s=$(pass verify)
  plan_bytes=$(stat -c %s "$dir/plan.bin")
  read -r shared smin smed smax busy busy_moved busy_instr busy_section \
    largest largest_moved largest_section <<< "$(plan_stats "$dir/plan.bin" "$dir/compile.stderr")"
  echo "load (--keep): $load_s s wall, $load_cpu s CPU, $(mib "$load_kib") MiB"
  echo "compile: $compile_s s wall, $compile_cpu s CPU, $(mib "$compile_kib") MiB"
  grep -E "^ +[0-9.]+ \(" "$dir/compile.stderr" | grep -v "^ *0.0000 " || true
  grep -E "^(plan|files):" "$dir/compile.stderr"
  echo "plan: $plan_bytes bytes, shared sections $shared bytes"
  echo "busiest rank $busy: $busy_moved bytes moved, $busy_instr instructions, section $busy_section bytes"
  echo "largest section: rank $largest, $largest_section bytes ($largest_moved bytes moved)"
  /usr/bin/time -f "%e %M" -o "$dir/rank-read.time" \
    "$build_dir/bin/aoa-bench-plan-read" "$dir/plan.bin" --rank 1
  read -r rank_read_s rank_read_kib < "$dir/rank-read.time"
  rank_reads+=("| $ranks | $rank_read_s | $(mib "$rank_read_kib") |")
  rows+=("| $ranks | $src_shards | $dst_shards | $load_s / $load_cpu | $(mib "$load_kib") | $compile_s / $compile_cpu | $resolve_s | $schedule_s | $verify_s | $(mib "$compile_kib") | $plan_bytes | $shared | $smin / $smed / $smax | $busy_moved ($busy_instr instr., section $busy_section) |")
  per_shard+=("$(awk -v r="$ranks" -v n=$((src_shards + dst_shards)) -v c="$compile_cpu" -v l="$load_cpu" \
    -v rs="$resolve_s" -v sc="$schedule_s" -v k="$compile_kib" -v lk="$load_kib" -v p="$plan_bytes" -v sh="$shared" 'BEGIN {
      printf "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f | %.0f |", r, n, 1e6 * c / n, 1e6 * l / n,
        1e6 * rs / n, 1e6 * sc / n, 1024 * k / n, 1024 * lk / n, p / n, sh / n }')")
done

echo "== table"
echo "| ranks | source shards | destination shards | load s (wall / CPU) | load MiB | compile s (wall / CPU) | resolve-shard-sources s | schedule s | verify s | compile peak RSS MiB | plan bytes | shared sections bytes | rank section bytes min / median / max | busiest rank: bytes moved (instructions, section bytes) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo "== per shard (source + destination)"
echo "| ranks | shards | compile CPU µs | load CPU µs | resolve-shard-sources µs | schedule µs | compile RSS bytes | load RSS bytes | plan bytes | shared sections bytes |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${per_shard[@]}"
echo "== what one process of an mpi run reads and checks (rank 1: header, shared tables, its section)"
echo "| ranks | wall s | peak RSS MiB |"
echo "| --- | --- | --- |"
printf '%s\n' "${rank_reads[@]}"
