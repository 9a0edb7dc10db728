#!/usr/bin/env bash
# The test command CI runs (README.md's second command): the whole ctest suite
# on build/ (made by scripts/quickstart.sh), then the same suite built with
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (configured and
# built here). Any sanitizer report fails, also one from a tool that a test
# expects to fail: reports are written to build-asan/sanitizer-reports/ and
# every one found there is printed and fails the run. Open MPI's own leaks are
# suppressed (test/sanitizers/lsan-openmpi.supp), nothing else.
#
# Usage: scripts/check.sh [--asan-only | --no-asan] [CTEST_ARGS...]
#   --asan-only   only the ASan + UBSan build and run
#   --no-asan     only the ctest run on build/
#   CTEST_ARGS    passed to both ctest runs (e.g. -R lit-e2e)
set -euo pipefail
cd "$(dirname "$0")/.."

plain=1
asan=1
case "${1:-}" in
  --asan-only) plain=0; shift ;;
  --no-asan) asan=0; shift ;;
esac

if [[ $plain == 1 ]]; then
  ctest --test-dir build --output-on-failure -j2 "$@"
fi
[[ $asan == 1 ]] || exit 0

echo "== ASan + UBSan build (build-asan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DAOA_ENABLE_SANITIZERS=ON -DAOA_ENABLE_CUDA=OFF > /dev/null
cmake --build build-asan -j "$(nproc)"

reports="$PWD/build-asan/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
# A small quarantine and 16-frame allocation stacks halve the suite's time
# (most of it is process start-up and exit); the e2e suite's mpi ranks keep
# 30 frames (test/e2e/lit.cfg.py).
export ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan:quarantine_size_mb=16:malloc_context_size=16"
export LSAN_OPTIONS="suppressions=$PWD/test/sanitizers/lsan-openmpi.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
echo "== ctest under ASan + UBSan"
status=0
ctest --test-dir build-asan --output-on-failure -j2 "$@" || status=$?
if compgen -G "$reports/*" > /dev/null; then
  for report in "$reports"/*; do
    echo "== sanitizer report $report"
    cat "$report"
  done
  echo "check.sh: $(ls "$reports" | wc -l) sanitizer report(s); see above" >&2
  exit 1
fi
exit "$status"
