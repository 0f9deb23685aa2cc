#!/usr/bin/env bash
# scripts/test.sh — the whole test suite: set-up and build (scripts/setup.sh), then every ctest
# test (unit, MPI under mpirun with 2-4 ranks, end to end). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L unit`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/setup.sh"
ctest --test-dir "${BUILD_DIR:-$ROOT/build}" --output-on-failure "$@"
