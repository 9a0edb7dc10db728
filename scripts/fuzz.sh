#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz; docs/testing.md, "Fuzzing") with
# clang-14, ASan and UBSan in their own build directory, and runs each target
# for the given time from its seed corpus (test/fuzz/corpus/TARGET). Fails when
# any target finds a crash, a sanitizer report, a leak, a timeout (an input
# running longer than --timeout) or an out-of-memory (over 2048 MB).
#
# Usage: scripts/fuzz.sh [--time SECONDS | --cpu-time SECONDS] [--parallel N]
#                        [--timeout SECONDS] [--build DIR] [TARGET...]
#   --time      seconds per target (default 60)
#   --cpu-time  instead of --time: run each target until it has had this
#               many seconds of CPU (user + system), then stop it as
#               libFuzzer stops on SIGUSR1 (gracefully; exit status 0 when
#               nothing was found). On a machine shared with other work a
#               target gets less CPU than the wall time it runs for.
#   --parallel  targets run at once (default 1)
#   --timeout   the longest one input may run, in wall time (default 30 s;
#               beside other work use more, e.g. 300)
#   --build     the build directory (default build-fuzz)
#   TARGET      fuzz-config, fuzz-metadata, fuzz-layout-spec,
#               fuzz-safetensors-header, fuzz-plan, fuzz-binary-plan
#               (default: all)
#
# What a run finds stays in BUILD/fuzz-out/TARGET/: the corpus it grew
# (corpus/, reused by the next run), its log (fuzz.log) and the inputs that
# failed (crash-*, leak-*, timeout-*, oom-*). Replay one with
# BUILD/fuzz/TARGET FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(fuzz-config fuzz-metadata fuzz-layout-spec fuzz-safetensors-header fuzz-plan
             fuzz-binary-plan)
seconds=60
cpu_seconds=
parallel=1
timeout=30
build=build-fuzz
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --time) seconds="$2"; shift 2 ;;
    --cpu-time) cpu_seconds="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "fuzz.sh: unknown target '$1'; the targets are: ${all_targets[*]}" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DAOA_ENABLE_FUZZERS=ON -DAOA_ENABLE_TESTS=OFF -DAOA_ENABLE_CUDA=OFF -DAOA_ENABLE_MPI=OFF > /dev/null
cmake --build "$build" --target "${targets[@]}" -j "$(nproc)"

# Sends SIGUSR1 to process PID once it has had SECONDS of CPU (user +
# system, from /proc/PID/stat); returns when it has exited.
stop_after_cpu_time() {
  local pid="$1" limit=$(( $2 * $(getconf CLK_TCK) )) stat fields
  while kill -0 "$pid" 2> /dev/null; do
    read -r stat < "/proc/$pid/stat" 2> /dev/null || break
    # Fields from the 3rd on, after "PID (COMM) ": utime, stime are 14, 15.
    read -r -a fields <<< "${stat##*) }"
    if (( fields[11] + fields[12] >= limit )); then
      kill -USR1 "$pid" 2> /dev/null || true
      break
    fi
    sleep 2
  done
}

# One run of a target; its exit status goes to OUT/status.
fuzz_target() {
  local target="$1" out="$2" limit=(-max_total_time="$seconds")
  [[ -z "$cpu_seconds" ]] || limit=(-max_total_time=0)
  "$build/fuzz/$target" "${limit[@]}" -rss_limit_mb=2048 -timeout="$timeout" \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "test/fuzz/corpus/$target" \
    > "$out/fuzz.log" 2>&1 &
  local pid=$! status=0
  [[ -z "$cpu_seconds" ]] || stop_after_cpu_time "$pid" "$cpu_seconds"
  wait "$pid" || status=$?
  echo "$status" > "$out/status"
}

# One target: a fresh output directory but the corpus of earlier runs; the
# exit status is libFuzzer's (0 when the time ran out with nothing found).
run_target() {
  local target="$1" out="$build/fuzz-out/$1"
  mkdir -p "$out/corpus"
  rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* "$out"/slow-unit-*
  # The wall and CPU seconds it got (real, user, system) go beside the log:
  # on a shared machine a target may get less CPU than the wall time it ran.
  local TIMEFORMAT='%R %U %S'
  { time fuzz_target "$target" "$out"; } 2> "$out/cpu-time"
}

# The last line of a target's result: seconds, executions, corpus, findings.
report() {
  local target="$1" status="$2" out="$build/fuzz-out/$1"
  local execs findings
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -1)
  findings=$(cd "$out" && ls -1 crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ' || true)
  if [[ "$status" == 0 && -z "$findings" ]]; then
    local wall cpu
    wall=$(awk '{ printf "%.0f", $1 }' "$out/cpu-time" 2>/dev/null || true)
    cpu=$(awk '{ printf "%.0f", $2 + $3 }' "$out/cpu-time" 2>/dev/null || true)
    echo "fuzz.sh: $target: ok, ${execs:-?} runs in ${wall:-?} s (${cpu:-?} CPU s), corpus $(ls "$out/corpus" | wc -l) inputs"
  else
    echo "fuzz.sh: $target: FAILED (exit $status) ${findings:+: $findings}; log: $out/fuzz.log"
    grep -m1 -E '^==[0-9]+==ERROR|runtime error|^SUMMARY' "$out/fuzz.log" || tail -5 "$out/fuzz.log"
  fi
}

for target in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $parallel ]]; do wait -n || true; done
  if [[ -n "$cpu_seconds" ]]; then
    echo "fuzz.sh: $target for ${cpu_seconds} CPU s"
  else
    echo "fuzz.sh: $target for ${seconds} s"
  fi
  run_target "$target" &
done
wait
failed=0
for target in "${targets[@]}"; do
  status=$(cat "$build/fuzz-out/$target/status")
  report "$target" "$status"
  [[ "$status" == 0 ]] || failed=1
done
exit "$failed"
