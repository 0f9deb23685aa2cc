#!/usr/bin/env bash
# scripts/fuzz.sh — provides: the fuzz run. Builds the libFuzzer harnesses of tests/fuzz with clang
# (ASan + UBSan, in the sanitizer tree of scripts/hardening_build.sh), then runs each for SECONDS
# (default 60) on a copy of its seed corpus (tests/fuzz/corpus/<harness>/; the committed seeds never grow),
# prints how many inputs each executed, and exits 1 if any harness found a crash, a sanitizer
# report, a leak, a timeout, an out-of-memory or an unexpected exception.
#
#   scripts/fuzz.sh [SECONDS]
#
# A finding is saved as build-sanitize/findings/<harness>/crash-* (or leak-, timeout-, oom-);
# replay it with `build-sanitize/tests/fuzz/<harness> FILE`. Needs clang and libclang-rt-dev
# (scripts/install_packages.sh hardening).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}
SECONDS_EACH=${1:-60}
[[ $SECONDS_EACH =~ ^[0-9]+$ ]] || {
  echo "usage: scripts/fuzz.sh [SECONDS]" >&2
  exit 2
}
HARNESSES=(fuzz_idx_file fuzz_options fuzz_checkpoint_file fuzz_checkpoint_store
  fuzz_training_checkpoint)

"$ROOT/scripts/hardening_build.sh" fuzzers

# Leaks count as findings (LeakSanitizer runs at the end of each input that looks leaky).
# LibTorch, Boost and zlib are not instrumented; their allocations are still tracked.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# run_harness HARNESS: one harness for SECONDS_EACH on a fresh copy of its seed corpus; prints
# its executions; returns non-zero on any finding.
run_harness() {
  local harness=$1 status=0 executed
  local corpus=$BUILD_DIR/corpus/$harness findings=$BUILD_DIR/findings/$harness
  local log=$BUILD_DIR/$harness.log
  rm -rf "$corpus" "$findings" && mkdir -p "$corpus" "$findings"
  cp "$ROOT/tests/fuzz/corpus/$harness/"* "$corpus/"
  # -rss_limit_mb also caps a single allocation (malloc_limit_mb defaults to it): a header that
  # makes a reader allocate gigabytes is a finding, not a slow input. -timeout: per input.
  "$BUILD_DIR/tests/fuzz/$harness" "$corpus" -dict="$ROOT/tests/fuzz/$harness.dict" \
    -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if ((status == 0)); then
    echo "fuzz: $harness: ${executed:-?} executions in ${SECONDS_EACH} s, no findings"
    return 0
  fi
  echo "fuzz: $harness: FAILED (exit $status) after ${executed:-?} executions; log $log" >&2
  grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|terminate called|fuzz property)' "$log" |
    head -5 >&2 || true
  ls "$findings" >&2
  return 1
}

# One harness per core at a time: each still gets a whole core for its SECONDS_EACH.
failed=()
cores=$(nproc)
for ((first = 0; first < ${#HARNESSES[@]}; first += cores)); do
  batch=("${HARNESSES[@]:first:cores}")
  pids=()
  for harness in "${batch[@]}"; do
    run_harness "$harness" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=("${batch[$i]}")
  done
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: OK"
