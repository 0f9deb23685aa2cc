#!/usr/bin/env bash
# scripts/sanitize.sh — provides: the unit and MPI tests under AddressSanitizer and
# UndefinedBehaviorSanitizer. Builds the tests with clang, -fsanitize=address,undefined and
# -fno-sanitize-recover=undefined (into build-sanitize/ or $SANITIZE_BUILD_DIR), then runs the ctest
# labels unit and mpi there; extra arguments go to ctest. Any memory error, leak or undefined
# behaviour ends the test with a report and fails the run. The end-to-end tests stay with the
# optimized build (scripts/test.sh).
#
# clang rather than gcc: scripts/fuzz.sh needs it anyway, so CI installs one extra compiler only.
# Leak reports from Open MPI's and LibTorch's own allocations are suppressed in
# tests/sanitizer/lsan.supp (tests/CMakeLists.txt sets the sanitizer options for ctest).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}

"$ROOT/scripts/install_packages.sh" ci
"$ROOT/scripts/install_packages.sh" hardening
# -O1 with line tables: what the sanitizers recommend, and reports name file and line.
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DMNIST_DDP_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  >/dev/null
cmake --build "$BUILD_DIR" --target unit_tests mpi_tests --parallel "$(nproc)"
ctest --test-dir "$BUILD_DIR" -L '^(unit|mpi)$' --output-on-failure "$@"
