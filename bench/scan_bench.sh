#!/usr/bin/env bash
# Times aoa-scan on a generated Hugging Face directory of 1,000 files and
# 100,000 tiny tensors (gen_hf_directory.py), plain and as a Hub-cache
# snapshot of symbolic links, against baselines measured in the same run:
# `head -q -c 65536` over every file (one process reading the first 64 KiB
# of each, about what a header reader must read; here the whole file) and a
# Python loop that json-parses the index and every header (validating
# nothing).
# Wall and CPU (user + sys) times are printed, since the 2-core machine of
# bench/RESULTS.md is shared.
# Usage:
#   bash bench/scan_bench.sh [BUILD_DIR] [OUT_DIR] [RUNS]
# BUILD_DIR must have aoa-scan built; OUT_DIR (default /tmp/aoa-bench-scan)
# receives about 30 MB. Each command runs RUNS times (default 7), page cache
# warm; the best and the median wall time are printed.
set -euo pipefail
build_dir="${1:-build}"
out_dir="${2:-/tmp/aoa-bench-scan}"
runs="${3:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
scan="$build_dir/bin/aoa-scan"
source "$here/common.sh"

print_machine
echo "== generate"
if [[ ! -f "$out_dir/hf/model.safetensors.index.json" ]]; then
  python3 "$here/gen_hf_directory.py" "$out_dir/hf"
  python3 "$here/gen_hf_directory.py" "$out_dir/hub" --links
fi
du -sh "$out_dir/hf"
ls "$out_dir/hf" | wc -l
ls -l "$out_dir/hf/model.safetensors.index.json"
cat "$out_dir"/hf/* "$out_dir"/hub/blobs/* > /dev/null # warm the page cache

python3 - "$scan" "$out_dir" "$runs" <<'PY'
import resource, statistics, subprocess, sys, time
scan, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted("%s/hf/%s" % (out, n) for n in __import__("os").listdir(out + "/hf")
               if n.endswith(".safetensors"))
commands = [
    ("baseline: head -q -c 65536 (every file, one process)",
     ["head", "-q", "-c", "65536"] + files),
    # What a script that reads the headers would do, validating nothing.
    ("baseline: python3 json-parses the index and every header",
     [sys.executable, "-c",
      "import json, struct, sys\n"
      "d = sys.argv[1]\n"
      "index = json.load(open(d + '/model.safetensors.index.json'))\n"
      "n = 0\n"
      "for f in sorted(set(index['weight_map'].values())):\n"
      "    with open(d + '/' + f, 'rb') as s:\n"
      "        (k,) = struct.unpack('<Q', s.read(8))\n"
      "        n += len(json.loads(s.read(k)))\n"
      "assert n == len(index['weight_map'])\n", out + "/hf"]),
    ("aoa-scan hf -o scan.json", [scan, out + "/hf", "-o", out + "/scan.json"]),
    ("aoa-scan hub/snapshot (symbolic links) -o scan-links.json",
     [scan, out + "/hub/snapshot", "-o", out + "/scan-links.json"]),
]
def cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

# Wall time, and CPU time (user + sys), which other load on the machine
# disturbs less.
for name, command in commands:
    walls, cpus = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), cpu()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        cpus.append(cpu() - start_cpu)
    print("%-58s wall best %.3f s median %.3f s, cpu median %.3f s" % (
        name, min(walls), statistics.median(walls), statistics.median(cpus)))
PY
echo "== aoa-scan summary and peak RSS"
/usr/bin/time -f "%e s wall, %M KiB peak RSS" "$scan" "$out_dir/hf" -o "$out_dir/scan.json"
ls -l "$out_dir/scan.json"
cmp "$out_dir/scan.json" "$out_dir/scan-links.json" && echo "the snapshot of links scans to the same metadata"
