#!/usr/bin/env bash
# scripts/hardening_build.sh — provides: the one tree that scripts/sanitize.sh and scripts/fuzz.sh
# share (build-sanitize/ or $SANITIZE_BUILD_DIR): clang with ASan, UBSan and libFuzzer's coverage
# on every target, each source compiled alone (no unity batches), so every source is checked to
# include what it uses. Installs what it needs, configures, builds TARGETS, prints nothing else.
#
#   scripts/hardening_build.sh TARGET...
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}
(($#)) || {
  echo "usage: scripts/hardening_build.sh TARGET..." >&2
  exit 2
}

"$ROOT/scripts/install_packages.sh" ci
"$ROOT/scripts/install_packages.sh" hardening
# -O1 with line tables: what the sanitizers recommend, and reports name file and line.
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DMNIST_DDP_SANITIZE=ON \
  -DMNIST_DDP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" >/dev/null
cmake --build "$BUILD_DIR" --target "$@" --parallel "$(nproc)"
