#!/usr/bin/env bash
# tests/gpu/run.sh — provides: the GPU checks of mnist_ddp in one command: the machine's facts,
# every build dependency found or unpacked from deps/debs (deps.sh), mnist_ddp, mpi_tests and
# allreduce_bench built with the NCCL backend into build-gpu/, NCCL test cases and training runs on
# every GPU (NCCL, bf16, CUDA graphs, MPI on CUDA, DP) checked by exit code, accuracy and log
# (log_checks.sh), 8, 4 and 2 NCCL ranks on one GPU (multirank.sh), the benchmark, and a Markdown
# table; exits non-zero if any check failed.
#
#   tests/gpu/run.sh [--out DIR] [--deps-only | --configure-only | --build-only]
#     --out DIR         the reports and every log (one gpu-check.tar.gz) there (or GPU_CHECK_OUT)
#     --deps-only       facts and dependencies only (unpacks deps/debs if needed, checks the
#                       unpacked Open MPI with `mpirun -np 2 uname -n`); a CPU LibTorch is accepted
#     --configure-only  ... and configure build-gpu/ (a CPU LibTorch is accepted: NCCL then AUTO)
#     --build-only      ... and build mnist_ddp, mpi_tests and allreduce_bench (no GPU needed)
#
# Environment: TORCH_DIR or Torch_DIR (LibTorch's TorchConfig.cmake folder, a CMake prefix above
# it, or the LibTorch root; default: the python3 torch's if it has CUDA, as scripts/setup.sh),
# MNIST_DDP_DATA (default data/fashion-mnist: the four Fashion-MNIST IDX files), GPU_CHECK_DEBS
# (default deps/debs, made by scripts/pack_debian_deps.sh), GPU_CHECK_DEPS_ROOT (default
# deps/root, where they are unpacked), GPU_CHECK_USE_DEBS=1 (take every dependency from the debs
# even where the system has it),
# GPU_CHECK_BUILD_DIR (default build-gpu), GPU_CHECK_RUN_TIMEOUT (seconds per run, default 90),
# GPU_CHECK_RUN_BUDGET (seconds for all runs together, default 300), GPU_CHECK_BUILD_TIMEOUT
# (default 480), GPU_CHECK_BENCH=0 (skip bench/gpu/graph_bench.py), GPU_CHECK_BENCH_TIMEOUT
# (default 480), GPU_CHECK_MNIST (the real MNIST for it, default data/mnist),
# GPU_CHECK_DEADLINE (seconds from the start by which the script ends, summary written and logs
# copied: runs and the benchmark get no more than is left; default 0, none), GPU_CHECK_ONLY (an
# extended regular expression: only the runs whose names match it, e.g. 'graph' or 'multirank';
# the benchmark runs when it matches graph_bench), GPU_CHECK_MULTIRANK=0 (skip multirank.sh's
# checks; MULTIRANK_* as that script says),
# GPU_CHECK_BENCH_ARGS (more arguments for graph_bench.py, e.g. '--rounds 1 --seeds 3'), PYTHON
# (default python3).
# Exit codes: 0 all checks passed, 1 a check failed, 2 something needed is missing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPT_START=$SECONDS

usage() {
  sed -n '9,14p' "$0" >&2
  exit 2
}

MODE=full
OUT_DIR=${GPU_CHECK_OUT:-}
while (($#)); do
  case $1 in
    --out) (($# >= 2)) || usage; OUT_DIR=$2; shift 2 ;;
    --out=*) OUT_DIR=${1#--out=}; shift ;;
    --deps-only) MODE=deps; shift ;;
    --configure-only) MODE=configure; shift ;;
    --build-only) MODE=build; shift ;;
    -h | --help) usage ;;
    *) echo "gpu check: unknown argument '$1'" >&2; usage ;;
  esac
done

DEBS_DIR=${GPU_CHECK_DEBS:-$ROOT/deps/debs}
DEPS_ROOT=${GPU_CHECK_DEPS_ROOT:-$ROOT/deps/root}
BUILD_DIR=${GPU_CHECK_BUILD_DIR:-$ROOT/build-gpu}
RUN_TIMEOUT=${GPU_CHECK_RUN_TIMEOUT:-90}
RUN_BUDGET=${GPU_CHECK_RUN_BUDGET:-300}
BENCH_TIMEOUT=${GPU_CHECK_BENCH_TIMEOUT:-480}
MNIST_DIR=${GPU_CHECK_MNIST:-$ROOT/data/mnist}
BUILD_TIMEOUT=${GPU_CHECK_BUILD_TIMEOUT:-480}
DEADLINE=${GPU_CHECK_DEADLINE:-0}
ONLY=${GPU_CHECK_ONLY:-}
read -r -a BENCH_ARGS <<<"${GPU_CHECK_BENCH_ARGS:-}"
PYTHON=${PYTHON:-python3}
DATA_DIR=${MNIST_DDP_DATA:-$ROOT/data/fashion-mnist}
LOG_DIR=$BUILD_DIR/gpu-check
# shellcheck source=tests/gpu/check_harness.sh
source "$ROOT/tests/gpu/check_harness.sh"
require_seconds GPU_CHECK_RUN_TIMEOUT GPU_CHECK_RUN_BUDGET GPU_CHECK_BENCH_TIMEOUT \
  GPU_CHECK_BUILD_TIMEOUT GPU_CHECK_DEADLINE
trap copy_out EXIT

# ---------------------------------------------------------------------------------------------
hr "Machine"
{
  say "date          $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  say "host          $(uname -n) ($(nproc) cores, $(uname -r))"
  # shellcheck source=/dev/null
  say "os            $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}")"
  # sed reads to the end: head would close the pipe early, and pipefail would take ldd's SIGPIPE
  # for a failure.
  say "glibc         $(ldd --version 2>/dev/null | sed -n '1s/.* //p' || echo '?')"
  say "g++           $( (g++ --version 2>/dev/null || echo 'not found') | head -1)"
  say "cmake         $( (cmake --version 2>/dev/null || echo 'not found') | head -1)"
  say "ninja         $(ninja --version 2>/dev/null || echo 'not found')"
  say "nvcc          $( (nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version \
                           2>/dev/null || echo 'not found') | tail -1)"
  say "python        $(command -v "$PYTHON" || echo 'not found')"
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout 30 nvidia-smi -L 2>&1 | sed 's/^/#   /' || true
    timeout 30 nvidia-smi --query-gpu=driver_version,name,memory.total --format=csv,noheader \
      2>&1 | head -1 | sed 's/^/#   driver, /' || true
  else
    say "nvidia-smi    not found"
  fi
} | tee "$LOG_DIR/machine.log"

TORCH_FACTS=$LOG_DIR/torch.log
timeout 120 env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" "$PYTHON" - >"$TORCH_FACTS" 2>&1 \
  <<'EOF' || true
import torch
print("torch_version", torch.__version__)
print("torch_file", torch.__file__)
print("cmake_prefix_path", torch.utils.cmake_prefix_path)
print("cuda_version", torch.version.cuda)
try:
    print("cuda_available", torch.cuda.is_available())
    print("device_count", torch.cuda.device_count())
    for i in range(torch.cuda.device_count()):
        print("device", i, torch.cuda.get_device_name(i))
except Exception as e:  # a broken driver still leaves the other facts
    print("cuda_error", repr(e))
try:
    print("nccl_version", ".".join(map(str, torch.cuda.nccl.version())))
except Exception as e:
    print("nccl_version none", repr(e))
EOF
sed 's/^/# torch: /' "$TORCH_FACTS"
torch_fact() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$TORCH_FACTS"; }
fact() {
  local value
  value=$(torch_fact "$1")
  echo "${value:-?}"
}

# ---------------------------------------------------------------------------------------------
hr "LibTorch"
# The LibTorch scripts/setup.sh would build against, so these checks prove the README's commands.
# shellcheck source=scripts/find_torch.sh
source "$ROOT/scripts/find_torch.sh"
find_torch "$PYTHON" || die 2 "set TORCH_DIR to the folder of TorchConfig.cmake of a CUDA LibTorch"
if [[ -z $TORCH_CONFIG_DIR ]]; then
  die 2 "no LibTorch found (TORCH_DIR and Torch_DIR unset; $PYTHON torch's" \
        "cmake_prefix_path='$(torch_fact cmake_prefix_path)', CUDA '$(torch_fact cuda_version)';" \
        "see $TORCH_FACTS). Set TORCH_DIR to the folder of TorchConfig.cmake of a CUDA LibTorch," \
        "or install PyTorch with CUDA for $PYTHON."
fi
say "TorchConfig   $TORCH_CONFIG_DIR"
if ((TORCH_HAS_CUDA)); then
  say "LibTorch has CUDA ($TORCH_PREFIX/lib/libtorch_cuda.so)"
elif [[ $MODE == full ]]; then
  die 2 "the LibTorch at $TORCH_PREFIX is CPU-only (no lib/libtorch_cuda.so; torch.version.cuda" \
        "= $(torch_fact cuda_version || true)). The GPU checks need a CUDA build: set" \
        "TORCH_DIR to one."
else
  say "LibTorch is CPU-only: accepted by --$MODE-only; the NCCL backend is built if NCCL is found"
fi

# ---------------------------------------------------------------------------------------------
hr "Dependencies"
# shellcheck source=tests/gpu/deps.sh
source "$ROOT/tests/gpu/deps.sh"
[[ $MODE == deps ]] && { say "--deps-only: done"; exit 0; }

# ---------------------------------------------------------------------------------------------
hr "Data"
for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
            t10k-labels-idx1-ubyte; do
  if [[ ! -f $DATA_DIR/$name && ! -f $DATA_DIR/$name.gz ]]; then
    die 2 "$DATA_DIR/$name(.gz) is missing. Put the four Fashion-MNIST IDX files there" \
          "(Debian: apt-get install dataset-fashion-mnist, then copy" \
          "/usr/share/datasets/fashion-mnist/*.gz; or from" \
          "https://github.com/zalandoresearch/fashion-mnist) or set MNIST_DDP_DATA to their folder."
  fi
done
DATA_DIR=$(cd "$DATA_DIR" && pwd)
say "data          $DATA_DIR"

# ---------------------------------------------------------------------------------------------
hr "Configure and build"
if [[ -f $BUILD_DIR/CMakeCache.txt ]]; then
  cached_gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")
  cached_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")
  want_gen=Unix\ Makefiles
  ((${#GENERATOR[@]})) && want_gen=Ninja
  if [[ $cached_gen != "$want_gen" || $cached_src != "$ROOT" ]]; then
    say "removing $BUILD_DIR's CMake cache (made for '$cached_src' with '$cached_gen')"
    rm -rf "$BUILD_DIR/CMakeCache.txt" "$BUILD_DIR/CMakeFiles"
  fi
fi
# No unity batches: two sources that clash only under this LibTorch's headers cannot stop the build.
configure_args=(-S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release
                "${TORCH_CONFIGURE_ARGS[@]}" -DMNIST_DDP_UNITY=OFF "${CMAKE_HINTS[@]}")
if [[ -n $CUDA_ROOT ]]; then
  configure_args+=(-DCUDAToolkit_ROOT="$CUDA_ROOT" -DCMAKE_CUDA_COMPILER="$CUDA_ROOT/bin/nvcc")
  export CUDA_HOME=${CUDA_HOME:-$CUDA_ROOT}
fi
# Cached find results would outlive a change of dependencies (debs or system): start afresh then.
configure_stamp=$BUILD_DIR/.gpu-check-configure-args
if [[ -f $BUILD_DIR/CMakeCache.txt && -f $configure_stamp ]] \
   && [[ $(cat "$configure_stamp") != "${configure_args[*]}" ]]; then
  say "the configure arguments changed: removing $BUILD_DIR's CMake cache"
  rm -rf "$BUILD_DIR/CMakeCache.txt" "$BUILD_DIR/CMakeFiles"
fi
printf '%s' "${configure_args[*]}" >"$configure_stamp"
printf 'cmake' >"$LOG_DIR/configure.log"
printf ' %q' "${configure_args[@]}" >>"$LOG_DIR/configure.log"
echo >>"$LOG_DIR/configure.log"
step_start=$SECONDS
if ! timeout 300 cmake "${configure_args[@]}" >>"$LOG_DIR/configure.log" 2>&1; then
  tail -40 "$LOG_DIR/configure.log" >&2
  die 1 "configure failed (log: $LOG_DIR/configure.log)"
fi
grep -E '^-- (LibTorch|NCCL backend|CUDA graphs|Found (MPI_CXX|Boost|Protobuf|ZLIB|CUDAToolkit))' \
  "$LOG_DIR/configure.log" | sed 's/^-- /# /' || true
say "configured in $((SECONDS - step_start)) s"
[[ $MODE == configure ]] && { say "--configure-only: done"; exit 0; }

step_start=$SECONDS
# Keep going past a failed file, so that one build shows every error.
keep_going=(-k)
((${#GENERATOR[@]})) && keep_going=(-k 0)
# build LOG: builds the programs within what is left of BUILD_TIMEOUT.
build() {
  timeout "$((BUILD_TIMEOUT - (SECONDS - step_start)))" cmake --build "$BUILD_DIR" \
    --target mnist_ddp mpi_tests allreduce_bench --parallel "$(nproc)" -- "${keep_going[@]}" \
    >"$1" 2>&1
}
show_build_errors() {
  grep -E -B2 -A12 'error|Error' "$1" | head -80 >&2 || tail -60 "$1" >&2
}
# Set when the capture code did not build and the checks run on a build without it.
GRAPHS_BUILD_FAILURE=""
if ! build "$LOG_DIR/build.log"; then
  show_build_errors "$LOG_DIR/build.log"
  if ! grep -q '^-- CUDA graphs: built' "$LOG_DIR/configure.log" \
     || ((SECONDS - step_start >= BUILD_TIMEOUT)); then
    die 1 "build failed or passed ${BUILD_TIMEOUT} s (log: $LOG_DIR/build.log)"
  fi
  # Switching the option recompiles lib/train/graphed_step.cpp alone: every check but the
  # graphed runs (which then fail, refused) still runs and measures.
  first_error=$(grep -m1 -E 'error:' "$LOG_DIR/build.log" | cut -c1-300 || true)
  GRAPHS_BUILD_FAILURE="the build with CUDA graphs failed (${first_error:-see the log}); the"
  GRAPHS_BUILD_FAILURE+=" checks ran on a build configured with -DMNIST_DDP_CUDA_GRAPHS=OFF"
  GRAPHS_BUILD_FAILURE+=" (log: $LOG_DIR/build.log)"
  say "$GRAPHS_BUILD_FAILURE"
  if ! timeout 120 cmake "${configure_args[@]}" -DMNIST_DDP_CUDA_GRAPHS=OFF \
       >>"$LOG_DIR/configure.log" 2>&1 || ! build "$LOG_DIR/build-without-graphs.log"; then
    show_build_errors "$LOG_DIR/build-without-graphs.log"
    die 1 "the build without CUDA graphs failed too (log: $LOG_DIR/build-without-graphs.log)"
  fi
fi
say "built mnist_ddp, mpi_tests and allreduce_bench in $((SECONDS - step_start)) s"
BIN=$BUILD_DIR/mnist_ddp
TESTS_BIN=$BUILD_DIR/tests/mpi_tests
BENCH_BIN=$BUILD_DIR/allreduce_bench
{
  ldd "$BIN" | grep -E 'libmpi|libnccl|libcudart|libtorch_cuda|libc10_cuda|libboost_pro|libprotobuf' \
    || true
} | tee "$LOG_DIR/ldd.log" | sed 's/^/#   /'
timeout 60 "$MPIRUN" -np 1 "$BIN" --version >"$LOG_DIR/version.log" 2>&1 || true
sed 's/^/#   /' "$LOG_DIR/version.log"
[[ $MODE == build ]] && { say "--build-only: done"; exit 0; }

# ---------------------------------------------------------------------------------------------
hr "Runs"
NGPU=$(torch_fact device_count)
if ! [[ $NGPU =~ ^[0-9]+$ ]] || ((NGPU == 0)); then
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if ((NGPU == 0)); then
  die 2 "no CUDA device is visible (torch: device_count=$(torch_fact device_count)," \
        "$(torch_fact cuda_error); nvidia-smi -L lists none)"
fi
say "$NGPU GPU(s): one rank per GPU"

# Every training run sees the same global batch (64, the 1-rank default) up to 8 ranks, so its
# accuracy after one epoch does not depend on the GPU count; beyond 8 ranks each takes 8. Measured on Fashion-MNIST on CPUs: linear 82.4%
# (1 rank, and 8 ranks of batch 8), cnn with --momentum 0.9 86.5% (2 ranks of batch 32; 77.4%
# without momentum). An untrained or garbage network stays near 10%.
PER_RANK_BATCH=$((64 / NGPU))
((PER_RANK_BATCH >= 8)) || PER_RANK_BATCH=8
FLOOR_LINEAR=0.75
FLOOR_CNN=0.80
FLOOR_CNN_BF16=0.78
RUNS_START=$SECONDS
COMMON=(--epochs 1 --data-dir "$DATA_DIR" --progress lines --log-every 200 --comm-timeout 60)
[[ -z $GRAPHS_BUILD_FAILURE ]] || add_row build_cuda_graphs - - - - "FAIL: $GRAPHS_BUILD_FAILURE"

# shellcheck source=tests/gpu/log_checks.sh
source "$ROOT/tests/gpu/log_checks.sh"
# shellcheck source=tests/gpu/multirank.sh
source "$ROOT/tests/gpu/multirank.sh"

MPI=("$MPIRUN" --bind-to none)
# The runs that capture: an error in a capture then names the C++ frames it came through.
GRAPHED=(env TORCH_SHOW_CPP_STACKTRACES=1 "${MPI[@]}")
check graph_replay_tests 1/1 - 0 replay_cases_ran -- "${GRAPHED[@]}" -np 1 "$TESTS_BIN" \
  --gpu '--test-case=*replay*'
graph=(-np 1 "$BIN" --backend nccl --model mlp --optimizer adam --lr 0.002 --lr-schedule onecycle
  --device cuda --batch-size 64 "${COMMON[@]}" --max-steps 200)
check graph_equality_eager 1/1 - 0 - -- "${MPI[@]}" "${graph[@]}" --cuda-graph off \
  --export-model "$LOG_DIR/graph_equality_eager.pt"
check graph_equality 1/1 - 0 same_parameters_as_eager -- "${GRAPHED[@]}" "${graph[@]}" \
  --cuda-graph on --export-model "$LOG_DIR/graph_equality.pt"
check nccl_tests "$NGPU/$NGPU" - 0 nccl_cases_ran -- \
  "${MPI[@]}" -np "$NGPU" "$TESTS_BIN" --gpu '--test-case=*nccl*'
ranks=$((NGPU + 1))
check nccl_tests_more_ranks "$ranks/$NGPU" - 0 more_ranks_refused -- \
  "${MPI[@]}" -np "$ranks" --oversubscribe "$TESTS_BIN" --gpu '--test-case=*nccl*'

ddp=(--device cuda --batch-size "$PER_RANK_BATCH" "${COMMON[@]}")
check ddp_nccl_cnn "$NGPU/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --backend nccl --model cnn --momentum 0.9 "${ddp[@]}" --cuda-graph off \
  --metrics-file "$LOG_DIR/ddp_nccl_cnn.jsonl"
check ddp_nccl_cnn_graph "$NGPU/$NGPU" "$FLOOR_CNN" 0 graph_on_device_rates -- "${GRAPHED[@]}" \
  -np "$NGPU" "$BIN" --backend nccl --model cnn --momentum 0.9 "${ddp[@]}" --cuda-graph on \
  --metrics-file "$LOG_DIR/ddp_nccl_cnn_graph.jsonl"
check ddp_nccl_linear "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --backend nccl --model linear "${ddp[@]}" --cuda-graph off \
  --metrics-file "$LOG_DIR/ddp_nccl_linear.jsonl"
check ddp_nccl_linear_graph "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 graph_on -- "${GRAPHED[@]}" \
  -np "$NGPU" \
  "$BIN" --backend nccl --model linear "${ddp[@]}" --cuda-graph on \
  --metrics-file "$LOG_DIR/ddp_nccl_linear_graph.jsonl"
check ddp_nccl_cnn_bf16 "$NGPU/$NGPU" "$FLOOR_CNN_BF16" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --backend nccl --model cnn --momentum 0.9 --precision bf16 "${ddp[@]}" \
  --metrics-file "$LOG_DIR/ddp_nccl_cnn_bf16.jsonl"
check ddp_mpi_cnn "$NGPU/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --backend mpi --model cnn --momentum 0.9 "${ddp[@]}" \
  --metrics-file "$LOG_DIR/ddp_mpi_cnn.jsonl"
check dp_cnn "1/$NGPU" "$FLOOR_CNN" 0 dp_eager -- "${MPI[@]}" -np 1 "$BIN" --mode dp --model cnn \
  --momentum 0.9 --device cuda --batch-size 64 "${COMMON[@]}" --metrics-file "$LOG_DIR/dp_cnn.jsonl"
# Two ranks per GPU over MPI: the gradient buckets are staged through host memory from LibTorch's
# autograd thread. Global batch 64 up to 4 GPUs, 16 x NGPU beyond (8 per rank).
ranks=$((2 * NGPU))
check ddp_mpi_cnn_2_per_gpu "$ranks/$NGPU" "$FLOOR_CNN" 0 - -- "${MPI[@]}" -np "$ranks" \
  --oversubscribe "$BIN" --backend mpi --model cnn --momentum 0.9 --device cuda \
  --batch-size $((64 / ranks > 8 ? 64 / ranks : 8)) "${COMMON[@]}" \
  --metrics-file "$LOG_DIR/ddp_mpi_cnn_2_per_gpu.jsonl"

# One rank that communicates as each of N does (--communicate-alone): NCCL's bucket allreduces
# handed over to the watchdog, the parameter broadcast and the timeline's collectives all run on
# one GPU, and the result is the plain 1-rank run's. The mlp, in two buckets: cuBLAS gives the
# same bits run to run, so any difference is the communication's; cuDNN's convolutions do not
# (three cnn runs on an H200 ended 300 steps at test losses 0.1175, 0.1158 and 0.1134).
alone=(-np 1 "$BIN" --backend nccl --model mlp --momentum 0.9 --bucket-mb 0.25 --device cuda
  --batch-size 64 "${COMMON[@]}" --max-steps 300)
check nccl_alone_plain 1/1 - 0 - -- "${MPI[@]}" "${alone[@]}" \
  --metrics-file "$LOG_DIR/nccl_alone_plain.jsonl"
check nccl_alone 1/1 - 0 communicated_alone -- "${MPI[@]}" "${alone[@]}" --communicate-alone \
  --cuda-graph off --timeline "$LOG_DIR/nccl_alone_timeline.json" \
  --metrics-file "$LOG_DIR/nccl_alone.jsonl"
# The same with every step's bucket allreduces captured and replayed, the watchdog watching each
# replay.
check nccl_alone_graph 1/1 - 0 communicated_alone_graphed -- "${GRAPHED[@]}" "${alone[@]}" \
  --communicate-alone --cuda-graph on --metrics-file "$LOG_DIR/nccl_alone_graph.jsonl"
# Checkpoints of a GPU run with the default --cuda-graph auto (graphed): stop at step 400
# (checkpoints at 200 and 400), resume to the end of the epoch, export the model (moved to the
# CPU).
rm -rf "$LOG_DIR/checkpoints"
check checkpoint_400_steps "$NGPU/$NGPU" - 0 graph_on -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --model linear "${ddp[@]}" --max-steps 400 --checkpoint-every 200 \
  --checkpoint-dir "$LOG_DIR/checkpoints"
check resume_to_epoch_end "$NGPU/$NGPU" "$FLOOR_LINEAR" 0 resumed_at_400 -- "${MPI[@]}" \
  -np "$NGPU" "$BIN" --model linear "${ddp[@]}" --checkpoint-dir "$LOG_DIR/checkpoints" \
  --resume auto --export-model "$LOG_DIR/model.pt" \
  --metrics-file "$LOG_DIR/resume_to_epoch_end.jsonl"

# Throughput at a batch that keeps a GPU busier (512 per GPU, 117 steps per epoch for 1 GPU):
# DDP and DP side by side; the floor only says that it still learns.
check ddp_nccl_cnn_b512 "$NGPU/$NGPU" 0.60 0 - -- "${MPI[@]}" -np "$NGPU" "$BIN" \
  --backend nccl --model cnn --momentum 0.9 --device cuda --batch-size 512 "${COMMON[@]}" \
  --metrics-file "$LOG_DIR/ddp_nccl_cnn_b512.jsonl"
check dp_cnn_b512 "1/$NGPU" 0.60 0 - -- "${MPI[@]}" -np 1 "$BIN" --mode dp --model cnn \
  --momentum 0.9 --device cuda --batch-size $((512 * NGPU)) "${COMMON[@]}" \
  --metrics-file "$LOG_DIR/dp_cnn_b512.jsonl"
check dp_under_2_ranks_refused "2/$NGPU" - 2 refused_for_mode -- \
  "${MPI[@]}" -np 2 --oversubscribe "$BIN" --mode dp --model linear --device cuda "${COMMON[@]}"

# agree NAME RUN_A RUN_B: a row that passes when the two runs' test accuracies are within 0.02.
agree() {
  local name=$1 acc_a=${ACC_OF[$2]:--} acc_b=${ACC_OF[$3]:--} agreement
  [[ $acc_a != - && $acc_b != - ]] || return 0
  agreement=$(py -c 'import sys
d = abs(float(sys.argv[1]) - float(sys.argv[2]))
print("PASS" if d <= 0.02 else "FAIL: test accuracy differs by %.4f (> 0.02)" % d)' \
    "$acc_a" "$acc_b")
  printf '# %-26s %-8s %s\n' "$name" "$NGPU/$NGPU" "$agreement"
  add_row "$name" "$NGPU/$NGPU" - "$acc_a vs $acc_b" - "$agreement"
}
# The same training through NCCL and through MPI must agree: a wrong average in one of them
# shows here even where both still learn.
agree nccl_vs_mpi_cnn ddp_nccl_cnn ddp_mpi_cnn
# Graphed and eager cnn runs learn alike (dropout draws other masks).
agree graph_vs_eager_cnn ddp_nccl_cnn_graph ddp_nccl_cnn

# Several NCCL ranks on one GPU, within a time budget of their own (MULTIRANK_BUDGET).
[[ ${GPU_CHECK_MULTIRANK:-1} == 0 ]] || multirank_checks

# ---------------------------------------------------------------------------------------------
# The benchmark of --cuda-graph beside PyTorch on this GPU (bench/gpu/graph_bench.py), on the real
# MNIST: its report goes to LOG_DIR/graph_bench.md.
BENCH_LINE=""
if [[ ${GPU_CHECK_BENCH:-1} != 0 ]] && [[ -z $ONLY || graph_bench =~ $ONLY ]]; then
  hr "Benchmark"
  if [[ -f $MNIST_DIR/train-images-idx3-ubyte || -f $MNIST_DIR/train-images-idx3-ubyte.gz ]]; then
    bench_rc=0
    bench_limit=$(within_deadline "$BENCH_TIMEOUT" 20)
    # A benchmark the deadline leaves no time for, or stops, is not a failed check: the line
    # says so, and the report has the runs done. A run that failed before then is one.
    if ((bench_limit < 30)); then
      BENCH_LINE="graph_bench: not run, GPU_CHECK_DEADLINE leaves ${bench_limit} s"
    else
      # Its PyTorch runs get the caller's library path, mpirun and mnist_ddp this script's. It
      # rewrites its report after every run: one stopped by the limit still has the runs done.
      timeout --kill-after=5 "$bench_limit" env PYTHON="$PYTHON" MPIRUN="$MPIRUN" \
        PYTHON_LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" "$PYTHON" \
        "$ROOT/bench/gpu/graph_bench.py" --bin "$BIN" --data "$MNIST_DIR" \
        --out "$LOG_DIR/graph_bench.md" "${BENCH_ARGS[@]}" >"$LOG_DIR/graph_bench.log" 2>&1 ||
        bench_rc=$?
      cat "$LOG_DIR/graph_bench.md" 2>/dev/null || tail -20 "$LOG_DIR/graph_bench.log"
      BENCH_LINE="graph_bench: exit $bench_rc ($LOG_DIR/graph_bench.md)"
      if ((bench_rc == 124 || bench_rc == 137)); then
        BENCH_LINE="graph_bench: stopped after $bench_limit s; the report has the runs done"
        if grep -q '^Failures:' "$LOG_DIR/graph_bench.md" 2>/dev/null; then
          BENCH_LINE+=", and runs that failed"
          FAILED=1
        fi
      elif ((bench_rc != 0)); then
        FAILED=1
      fi
    fi
  else
    BENCH_LINE="graph_bench: not run, no MNIST in $MNIST_DIR (set GPU_CHECK_MNIST)"
  fi
  say "$BENCH_LINE"
fi

# ---------------------------------------------------------------------------------------------
hr "Summary"
{
  echo "GPU checks of mnist_ddp on $(uname -n): $NGPU x $(fact device | cut -d' ' -f2-)," \
       "torch $(fact torch_version), CUDA $(fact cuda_version)," \
       "NCCL $(fact nccl_version | cut -d' ' -f1); data $DATA_DIR, 1 epoch, global batch 64" \
       "(cnn: SGD momentum 0.9); $((SECONDS - SCRIPT_START)) s in all"
  echo
  summary_table
  [[ -z $BENCH_LINE ]] || printf '\n%s\n' "$BENCH_LINE"
} | tee "$LOG_DIR/summary.md"
if ((FAILED)); then
  echo "gpu check: FAILED (logs in $LOG_DIR)" >&2
  exit 1
fi
echo "gpu check: all passed"
