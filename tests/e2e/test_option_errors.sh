#!/usr/bin/env bash
# Every way an option is refused (its value, its name, a config file, the environment, the device
# plan, another rank's value) ends every rank with exit code 2 and one clear line on stderr.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# check_usage_error MESSAGE ARGS...: 2 ranks, exit 2, MESSAGE printed once.
check_usage_error() {
  local message=$1
  shift
  run_mpi 2 "$@"
  expect_exit 2 "$*"
  expect_once err "$message" "$*"
}

# One launch per stage that refuses an option; every rule's message is checked by the unit tests
# (test_options.cpp, test_device_plan.cpp, test_graph_plan.cpp).
check_usage_error "--batch-size must be at most 1048576 (got 2147483647)" --batch-size 2147483647
check_usage_error "unrecognised option '--bogus'" --bogus
# Decided with the device plan: on the CPU there is no step to capture.
check_usage_error "--cuda-graph on cannot capture this run's steps: the run trains on the CPU" \
  --device cpu --cuda-graph on
# Where this process cannot use CUDA (no CUDA LibTorch or no GPU), asking for it is a usage error
# that says why, on every rank, within seconds.
if ! nvidia-smi -L >/dev/null 2>&1; then
  check_usage_error "--device cuda: " --device cuda
fi
printf 'epochs = 2\nbatch-sise = 32\n' >"$WORK/typo.cfg"
check_usage_error "unrecognised option 'batch-sise'" --config "$WORK/typo.cfg"

STATUS=0
MNIST_DDP_EPOCHS=0 timeout 300 mpirun -np 2 --oversubscribe -x MNIST_DDP_EPOCHS \
  "$MNIST_DDP_BIN" >"$WORK/out" 2>"$WORK/err" || STATUS=$?
expect_exit 2 "MNIST_DDP_EPOCHS=0"
expect_once err "--epochs must be at least 1 (got 0)" "MNIST_DDP_EPOCHS=0"

check_usage_error "--metrics-file '$WORK/no/such/dir/m.jsonl': folder '$WORK/no/such/dir' does not exist" \
  --data-dir "$FASHION_DIR" --metrics-file "$WORK/no/such/dir/m.jsonl"

# Ranks given different options (here the command line; as often a variable or a --config file
# that one node sees): refused before the first collective they would shape, by the rank that
# differs, however small the difference. The same launch has a mistyped variable, which rank 0
# warns about once.
STATUS=0
MNIST_DDP_EPOCH=3 timeout 300 mpirun --oversubscribe -x MNIST_DDP_EPOCH \
  -np 1 "$MNIST_DDP_BIN" --data-dir "$FASHION_DIR" : \
  -np 1 "$MNIST_DDP_BIN" --data-dir "$FASHION_DIR" --lr 0.01000001 >"$WORK/out" 2>"$WORK/err" \
  || STATUS=$?
expect_exit 2 "--lr 0.01000001 on rank 1 only"
expect_once err "[rank 1@" "the differing rank names itself"
expect_once err "--lr is 0.01000001 on this rank but 0.01 on rank 0" \
  "--lr 0.01000001 on rank 1 only"
expect_once err "mnist_ddp: warning: MNIST_DDP_EPOCH names no option; did you mean \
MNIST_DDP_EPOCHS (--epochs)?" "MNIST_DDP_EPOCH=3"

run_mpi 2 --help
expect_exit 0 "--help"
expect_once out "Usage: mpirun -np N mnist_ddp [options]" "--help printed by rank 0 only"
for option in data-dir model epochs batch-size test-batch-size lr momentum optimizer seed \
  threads max-steps metrics-file config version cuda-graph; do
  grep -q -- "--$option" "$WORK/out" || fail "--help does not mention --$option"
done

run_mpi 2 --version
expect_exit 0 "--version"
expect_once out "LibTorch" "--version printed once"
# One line per component, in the order the banner gives them too.
components=$(grep -E '^[A-Za-z_]+ +[^ ]' "$WORK/out" | awk '{printf "%s ", $1}')
[[ $components == "mnist_ddp LibTorch MPI NCCL CUDA BLAS " ]] ||
  fail "--version names '$components', not mnist_ddp LibTorch MPI NCCL CUDA BLAS"
grep -qE '^mnist_ddp  [0-9]+\.[0-9]+\.[0-9]+$' "$WORK/out" || fail "--version: no mnist_ddp X.Y.Z"
finish
