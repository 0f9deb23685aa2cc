# scripts/find_torch.sh — provides, when sourced: find_torch, the LibTorch that a build of
# mnist_ddp uses, shared by scripts/setup.sh and tests/gpu/run.sh so that the GPU checks build as
# the README tells users to.
#
# find_torch PYTHON: takes TORCH_DIR or Torch_DIR (LibTorch's TorchConfig.cmake folder, a CMake
# prefix above it, or the LibTorch root; given, it must hold a LibTorch) or else PYTHON's torch
# when it has CUDA (torch.utils.cmake_prefix_path). Sets TORCH_CONFIG_DIR (empty: none found, build
# against the system's LibTorch), TORCH_PREFIX, TORCH_HAS_CUDA (0 or 1) and TORCH_CONFIGURE_ARGS
# (the CMake arguments for it: Torch_DIR, and the NCCL backend and CUDA graphs on for a CUDA one).
# Returns 1, with a message on stderr, when TORCH_DIR or Torch_DIR names no LibTorch.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this file

# The TorchConfig.cmake folder at or below the hint $1, or nothing.
torch_config_dir_of() {
  local candidate
  [[ -n $1 ]] || return 0
  for candidate in "$1" "$1/Torch" "$1/share/cmake/Torch"; do
    if [[ -f $candidate/TorchConfig.cmake ]]; then
      (cd "$candidate" && pwd)
      return 0
    fi
  done
}

find_torch() {
  local python=$1 hint=${TORCH_DIR:-${Torch_DIR:-}}
  TORCH_CONFIG_DIR=""
  TORCH_PREFIX=""
  TORCH_HAS_CUDA=0
  TORCH_CONFIGURE_ARGS=()
  if [[ -n $hint ]]; then
    TORCH_CONFIG_DIR=$(torch_config_dir_of "$hint")
    if [[ -z $TORCH_CONFIG_DIR ]]; then
      echo "find_torch: TORCH_DIR/Torch_DIR '$hint' holds no TorchConfig.cmake (looked in it," \
           "its Torch/ and its share/cmake/Torch/)" >&2
      return 1
    fi
  else
    # The python torch only where it has CUDA: a CPU one gains nothing over the system's.
    local facts
    facts=$("$python" -c 'import torch; print(torch.version.cuda or "")
print(torch.utils.cmake_prefix_path)' 2>/dev/null) || return 0
    [[ -n $(sed -n 1p <<<"$facts") ]] || return 0
    TORCH_CONFIG_DIR=$(torch_config_dir_of "$(sed -n 2p <<<"$facts")")
    [[ -n $TORCH_CONFIG_DIR ]] || return 0
  fi
  TORCH_PREFIX=$(cd "$TORCH_CONFIG_DIR/../../.." && pwd)
  [[ -e $TORCH_PREFIX/lib/libtorch_cuda.so ]] && TORCH_HAS_CUDA=1
  local nccl=AUTO
  ((TORCH_HAS_CUDA)) && nccl=ON
  TORCH_CONFIGURE_ARGS=(-DTorch_DIR="$TORCH_CONFIG_DIR" -DMNIST_DDP_NCCL="$nccl"
                        -DMNIST_DDP_CUDA_GRAPHS=AUTO)
}
