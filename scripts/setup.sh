#!/usr/bin/env bash
# scripts/setup.sh — everything mnist_ddp needs, idempotent: installs the Debian/Ubuntu packages
# that are missing, configures and builds into build/ (or $BUILD_DIR), and fills data/mnist.
# Safe to run again: each step skips what is already done.
#
# Against Debian's LibTorch (CPU) by default; against a CUDA LibTorch, with the NCCL backend and
# CUDA graphs, when TORCH_DIR names one (the libtorch zip's folder) or python3's torch has CUDA
# (a PyTorch wheel): scripts/find_torch.sh. The CUDA toolkit and NCCL must be installed then.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-Release}

# shellcheck source=scripts/find_torch.sh
source "$ROOT/scripts/find_torch.sh"
find_torch "${PYTHON:-python3}"

# The Debian/Ubuntu packages: one list, shared with CI and docker/cpu.Dockerfile, of which only
# the missing ones are installed; with a LibTorch of its own, the build's alone and the data's.
if [[ -n $TORCH_CONFIG_DIR ]]; then
  echo "setup: LibTorch $TORCH_PREFIX ($( ((TORCH_HAS_CUDA)) && echo CUDA || echo CPU))"
  "$ROOT/scripts/install_packages.sh" gpu-build
  "$ROOT/scripts/install_packages.sh" data
else
  "$ROOT/scripts/install_packages.sh"
fi

generator=()
command -v ninja >/dev/null 2>&1 && [[ ! -f $BUILD_DIR/CMakeCache.txt ]] && generator=(-G Ninja)
cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  "${TORCH_CONFIGURE_ARGS[@]}" >/dev/null
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
echo "setup: built $BUILD_DIR/mnist_ddp"

cd "$ROOT"
scripts/fetch_data.sh data/mnist
