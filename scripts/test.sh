#!/usr/bin/env bash
# scripts/test.sh — the test suite: set-up and build (scripts/setup.sh), then the ctest tests
# (unit, MPI under mpirun with 2-4 ranks, end to end), as many at once as there are cores. Under
# CI (CI set) a skipped test fails the suite, naming it, unless it needs a GPU (label gpu): CI
# must run every check that root, namespaces and mounts make possible.
#
#   scripts/test.sh [--quick] [CTEST_ARGUMENT...]
#     --quick   the contributor's tier (ctest label quick): the unit tests, the script checks,
#               MPI at 2 and 4 ranks and a few end-to-end runs, in a few minutes
#   e.g. `scripts/test.sh -L unit`, `scripts/test.sh -R e2e_faults`
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tier=()
if [[ ${1:-} == --quick ]]; then
  tier=(-L quick)
  shift
fi
"$ROOT/scripts/setup.sh"
build=${BUILD_DIR:-$ROOT/build}
log=$build/ctest-output.log
status=0
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" "${tier[@]}" "$@" |
  tee "$log" || status=$?
if [[ -n ${CI:-} ]]; then
  skipped=$("$ROOT/scripts/skipped_tests.sh" "$log" "$build")
  if [[ -n $skipped ]]; then
    echo "test: under CI a skipped test fails: $(paste -sd' ' <<<"$skipped")" >&2
    status=1
  fi
fi
exit "$status"
