#!/usr/bin/env bash
# scripts/setup.sh — everything mnist_ddp needs, idempotent: installs the Debian/Ubuntu packages
# that are missing, configures and builds into build/ (or $BUILD_DIR), and fills data/mnist.
# Safe to run again: each step skips what is already done.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-Release}

# The Debian/Ubuntu packages: one list, shared with CI and docker/cpu.Dockerfile, of which only
# the missing ones are installed.
"$ROOT/scripts/install_packages.sh"

generator=()
command -v ninja >/dev/null 2>&1 && [[ ! -f $BUILD_DIR/CMakeCache.txt ]] && generator=(-G Ninja)
cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
echo "setup: built $BUILD_DIR/mnist_ddp"

cd "$ROOT"
scripts/fetch_data.sh data/mnist
