#!/usr/bin/env bash
# scripts/sanitize.sh — provides: the unit and MPI tests under AddressSanitizer and
# UndefinedBehaviorSanitizer. Builds the tests with clang, -fsanitize=address,undefined and
# -fno-sanitize-recover=undefined (scripts/hardening_build.sh: build-sanitize/ or
# $SANITIZE_BUILD_DIR), then runs the ctest label sanitize there (the unit and MPI test programs);
# extra arguments go to ctest. Any memory error, leak or undefined behaviour ends the test with a
# report and fails the run. The end-to-end tests stay with the
# optimized build (scripts/test.sh).
#
# clang rather than gcc: scripts/fuzz.sh needs it anyway, so CI installs one extra compiler only.
# Leak reports from Open MPI's and LibTorch's own allocations are suppressed in
# tests/sanitizer/lsan.supp (tests/CMakeLists.txt sets the sanitizer options for ctest).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}

"$ROOT/scripts/hardening_build.sh" unit_tests mpi_tests
ctest --test-dir "$BUILD_DIR" -L '^sanitize$' --output-on-failure "$@"
