#!/usr/bin/env bash
# scripts/test.sh — the test suite: set-up and build (scripts/setup.sh), then the ctest tests
# (unit, MPI under mpirun with 2-4 ranks, end to end), as many at once as there are cores.
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
ctest --test-dir "${BUILD_DIR:-$ROOT/build}" --output-on-failure --parallel "$(nproc)" \
  "${tier[@]}" "$@"
