#!/usr/bin/env bash
# tests/gpu/test_find_torch.sh — scripts/find_torch.sh, the LibTorch choice of scripts/setup.sh
# and tests/gpu/run.sh, against fake LibTorch folders and fake python3 interpreters: TORCH_DIR
# (its config folder, a prefix above it, the root) wins; a CUDA one turns the NCCL backend on, a
# CPU one leaves it AUTO; without TORCH_DIR python3's torch is taken only when it has CUDA; no
# torch, or one without a TorchConfig.cmake, leaves the system's; a TORCH_DIR without one fails.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
# shellcheck source=scripts/find_torch.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/find_torch.sh"

# fake_torch DIR [cuda]: a LibTorch root as the libtorch zip and a torch wheel lay it out.
fake_torch() {
  mkdir -p "$1/share/cmake/Torch" "$1/lib"
  touch "$1/share/cmake/Torch/TorchConfig.cmake" "$1/lib/libtorch.so"
  [[ ${2:-} != cuda ]] || touch "$1/lib/libtorch_cuda.so"
}
# fake_python NAME CUDA PREFIX: a python3 whose torch reports CUDA version CUDA ("" for a CPU
# torch) and cmake_prefix_path PREFIX; "none" for CUDA: a python3 without torch.
fake_python() {
  if [[ $2 == none ]]; then
    printf '#!/bin/sh\necho "ModuleNotFoundError: torch" >&2\nexit 1\n' >"$WORK/$1"
  else
    printf '#!/bin/sh\nprintf "%%s\\n%%s\\n" "%s" "%s"\n' "$2" "$3" >"$WORK/$1"
  fi
  chmod +x "$WORK/$1"
}
# expect WHAT PYTHON CONFIG_DIR CUDA ARGS [VAR=VALUE...]: find_torch PYTHON, in an environment
# with only those TORCH_DIR/Torch_DIR settings, returns 0 and sets these values.
expect() {
  local what=$1 python=$2 config=$3 cuda=$4 args=$5
  shift 5
  unset TORCH_DIR Torch_DIR
  local setting
  for setting in "$@"; do export "${setting?}"; done
  if ! find_torch "$python" 2>"$WORK/err"; then
    fail "$what: find_torch failed: $(cat "$WORK/err")"
  elif [[ $TORCH_CONFIG_DIR != "$config" || $TORCH_HAS_CUDA != "$cuda" ||
          "${TORCH_CONFIGURE_ARGS[*]}" != "$args" ]]; then
    fail "$what: got '$TORCH_CONFIG_DIR' cuda=$TORCH_HAS_CUDA args '${TORCH_CONFIGURE_ARGS[*]}'"
  else
    pass "$what"
  fi
  unset TORCH_DIR Torch_DIR
}

fake_torch "$WORK/libtorch-cuda" cuda
fake_torch "$WORK/libtorch-cpu"
fake_torch "$WORK/wheel/torch" cuda
fake_torch "$WORK/cpu-wheel/torch"
CUDA_CONFIG=$WORK/libtorch-cuda/share/cmake/Torch
CPU_CONFIG=$WORK/libtorch-cpu/share/cmake/Torch
WHEEL_CONFIG=$WORK/wheel/torch/share/cmake/Torch
fake_python python-cuda 13.0 "$WORK/wheel/torch/share/cmake"
fake_python python-cpu "" "$WORK/cpu-wheel/torch/share/cmake"
fake_python python-none none ""
fake_python python-broken 12.8 "$WORK/nowhere"
cuda_args="-DTorch_DIR=$CUDA_CONFIG -DMNIST_DDP_NCCL=ON -DMNIST_DDP_CUDA_GRAPHS=AUTO"

expect "TORCH_DIR, the root of a CUDA LibTorch" "$WORK/python-none" "$CUDA_CONFIG" 1 "$cuda_args" \
  TORCH_DIR="$WORK/libtorch-cuda"
expect "TORCH_DIR, its config folder" "$WORK/python-none" "$CUDA_CONFIG" 1 "$cuda_args" \
  TORCH_DIR="$CUDA_CONFIG"
expect "Torch_DIR, a prefix above the config folder" "$WORK/python-none" "$CUDA_CONFIG" 1 \
  "$cuda_args" Torch_DIR="$WORK/libtorch-cuda/share/cmake"
expect "TORCH_DIR wins over python3's CUDA torch" "$WORK/python-cuda" "$CUDA_CONFIG" 1 \
  "$cuda_args" TORCH_DIR="$WORK/libtorch-cuda"
expect "TORCH_DIR, a CPU LibTorch: NCCL left AUTO" "$WORK/python-cuda" "$CPU_CONFIG" 0 \
  "-DTorch_DIR=$CPU_CONFIG -DMNIST_DDP_NCCL=AUTO -DMNIST_DDP_CUDA_GRAPHS=AUTO" \
  TORCH_DIR="$WORK/libtorch-cpu"
expect "python3's CUDA torch" "$WORK/python-cuda" "$WHEEL_CONFIG" 1 \
  "-DTorch_DIR=$WHEEL_CONFIG -DMNIST_DDP_NCCL=ON -DMNIST_DDP_CUDA_GRAPHS=AUTO"
expect "python3's CPU torch: the system's LibTorch" "$WORK/python-cpu" "" 0 ""
expect "python3 without torch: the system's LibTorch" "$WORK/python-none" "" 0 ""
expect "no python3 at all: the system's LibTorch" "$WORK/no-such-python" "" 0 ""
expect "python3's CUDA torch without a TorchConfig.cmake: the system's" "$WORK/python-broken" \
  "" 0 ""

export TORCH_DIR=$WORK/nowhere
if find_torch "$WORK/python-cuda" 2>"$WORK/err"; then
  fail "a TORCH_DIR without a LibTorch was accepted"
elif ! grep -q "TORCH_DIR/Torch_DIR '$WORK/nowhere' holds no TorchConfig.cmake" "$WORK/err"; then
  fail "a TORCH_DIR without a LibTorch: the message does not name it: $(cat "$WORK/err")"
else
  pass "a TORCH_DIR without a LibTorch fails, naming it"
fi

finish find_torch
