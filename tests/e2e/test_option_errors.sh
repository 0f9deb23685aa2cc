#!/usr/bin/env bash
# Every invalid option ends every rank with exit code 2 and one clear line on stderr.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# check_usage_error MESSAGE ARGS...: 2 ranks, exit 2, MESSAGE printed once.
check_usage_error() {
  local message=$1
  shift
  run_mpi 2 "$@"
  expect_exit 2 "$*"
  expect_once err "$message" "$*"
}

check_usage_error "--batch-size must be at least 1 (got 0)" --batch-size 0
check_usage_error "--batch-size must be at least 1 (got -5)" --batch-size -5
check_usage_error "--epochs must be at least 1 (got 0)" --epochs 0
check_usage_error "--lr must be greater than 0 (got -0.1)" --lr -0.1
check_usage_error "--lr must be greater than 0 (got 0)" --lr 0
check_usage_error "--model must be one of linear, mlp, cnn, fastcnn (got resnet)" --model resnet
check_usage_error "--optimizer must be one of sgd, adam (got rmsprop)" --optimizer rmsprop
check_usage_error "--momentum must be in [0, 1) (got 1)" --momentum 1
check_usage_error "--test-batch-size must be at least 1 (got 0)" --test-batch-size 0
check_usage_error "--threads must be at least 0 (got -1)" --threads -1
check_usage_error "Adam has no momentum option" --optimizer adam --momentum 0.9
check_usage_error "--progress must be one of auto, live, lines, off (got fancy)" --progress fancy
check_usage_error "--log-every must be at least 0 (got -1)" --log-every -1
check_usage_error "--comm-timeout must be greater than 0 (got 0)" --comm-timeout 0
check_usage_error "--device must be one of auto, cpu, cuda (got gpu)" --device gpu
check_usage_error "--backend must be one of auto, nccl, mpi (got gloo)" --backend gloo
check_usage_error "--mode must be one of ddp, dp (got fsdp)" --mode fsdp
check_usage_error "--precision must be one of fp32, bf16 (got fp16)" --precision fp16
check_usage_error "--cuda-graph must be one of auto, on, off (got yes)" --cuda-graph yes
# Decided with the device plan: on the CPU there is no step to capture.
check_usage_error "--cuda-graph on cannot capture this run's steps: the run trains on the CPU" \
  --device cpu --cuda-graph on
check_usage_error "--backend must be mpi or auto with --device cpu" --device cpu --backend nccl
check_usage_error "--mode must be ddp with --device cpu" --device cpu --mode dp
# Where this process cannot use CUDA (no CUDA LibTorch or no GPU), asking for it is a usage error
# that says why, on every rank, within seconds.
if ! nvidia-smi -L >/dev/null 2>&1; then
  check_usage_error "--device cuda: " --device cuda
  check_usage_error "--backend nccl needs a CUDA device: " --backend nccl
  check_usage_error "--mode dp drives GPUs and needs CUDA: " --mode dp
fi
check_usage_error "unrecognised option '--bogus'" --bogus
check_usage_error "the argument ('abc') for option '--batch-size' is invalid" --batch-size abc
check_usage_error "cannot open --config file '$WORK/none.cfg'" --config "$WORK/none.cfg"

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
# differs.
STATUS=0
timeout 300 mpirun --oversubscribe -np 1 "$MNIST_DDP_BIN" --data-dir "$FASHION_DIR" : \
  -np 1 "$MNIST_DDP_BIN" --data-dir "$FASHION_DIR" --batch-size 32 >"$WORK/out" 2>"$WORK/err" \
  || STATUS=$?
expect_exit 2 "--batch-size 32 on rank 1 only"
expect_once err "[rank 1@" "the differing rank names itself"
expect_once err "--batch-size is 32 per rank on this rank but 64 per rank on rank 0" \
  "--batch-size 32 on rank 1 only"

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
grep -q "^BLAS" "$WORK/out" || fail "--version does not name the BLAS"
finish
