#!/usr/bin/env bash
# tests/gpu/run.sh — provides: the GPU checks of mnist_ddp in one command: the machine's facts,
# every build dependency found or unpacked from deps/debs (deps.sh), mnist_ddp, mpi_tests and
# allreduce_bench built with the NCCL backend into build-gpu/, NCCL test cases and training runs on
# every GPU (NCCL, bf16, CUDA graphs, MPI on CUDA, DP) checked by exit code, accuracy and log
# (log_checks.sh), 8, 4 and 2 NCCL ranks on one GPU (multirank.sh), the benchmark, and a Markdown
# table; exits non-zero if any check failed.
#
#   tests/gpu/run.sh [--out DIR] [--plan-only | --deps-only | --configure-only | --build-only]
#     --out DIR         the reports and every log (one gpu-check.tar.gz) there (or GPU_CHECK_OUT)
#     --plan-only       the machine's facts and the time plan of the selected checks (no GPU needed)
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
  sed -n '9,15p' "$0" >&2
  exit 2
}

MODE=full
OUT_DIR=${GPU_CHECK_OUT:-}
while (($#)); do
  case $1 in
    --out) (($# >= 2)) || usage; OUT_DIR=$2; shift 2 ;;
    --out=*) OUT_DIR=${1#--out=}; shift ;;
    --plan-only) MODE=plan; shift ;;
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
# shellcheck source=tests/gpu/log_checks.sh
source "$ROOT/tests/gpu/log_checks.sh"
# shellcheck source=tests/gpu/single_rank.sh
source "$ROOT/tests/gpu/single_rank.sh"
# shellcheck source=tests/gpu/multirank.sh
source "$ROOT/tests/gpu/multirank.sh"

# gpu_checks: every check, one rank per GPU first, then several NCCL ranks on one GPU within a
# budget of their own (MULTIRANK_BUDGET).
gpu_checks() {
  single_rank_checks
  [[ ${GPU_CHECK_MULTIRANK:-1} == 0 ]] || multirank_checks
}
bench_selected() { [[ ${GPU_CHECK_BENCH:-1} != 0 ]] && [[ -z $ONLY || graph_bench =~ $ONLY ]]; }

# The time plan's set-up and build: the dependencies' probe and unpacking and the configure take
# ~60 s on the lent GPU machine. A build takes the longer of its compiles' CPU-seconds spread over
# the cores and its longest chain of compiles, each times the slower parse of a CUDA LibTorch's
# headers, plus the links: figures measured here (tests/gpu/README.md, "The time plan").
SETUP_ESTIMATE=60
BUILD_CPU_SECONDS=152  # mnist_ddp and allreduce_bench, unity batches
BUILD_CHAIN_SECONDS=26
TESTS_CPU_SECONDS=61  # mpi_tests: its precompiled header, then its batches
TESTS_CHAIN_SECONDS=56
CUDA_HEADERS_FACTOR=1.5
LINK_SECONDS=3
# build_estimate: the seconds the build of TARGETS is expected to take; 0 where ninja finds
# nothing to compile.
build_estimate() {
  if [[ -f $BUILD_DIR/build.ninja ]] && command -v ninja >/dev/null 2>&1 &&
     ! ninja -C "$BUILD_DIR" -n "${TARGETS[@]}" 2>/dev/null | grep -q 'Building CXX'; then
    echo 0
    return
  fi
  local cpu=$BUILD_CPU_SECONDS chain=$BUILD_CHAIN_SECONDS
  if [[ " ${TARGETS[*]} " == *" mpi_tests "* ]]; then
    cpu=$((cpu + TESTS_CPU_SECONDS))
    chain=$((chain > TESTS_CHAIN_SECONDS ? chain : TESTS_CHAIN_SECONDS))
  fi
  awk -v cpu="$cpu" -v chain="$chain" -v f="$CUDA_HEADERS_FACTOR" -v cores="$(nproc)" \
    -v link="$LINK_SECONDS" 'BEGIN {
      wall = cpu / cores > chain ? cpu / cores : chain
      printf "%d\n", wall * f + link + 0.5 }'
}

# ---------------------------------------------------------------------------------------------
# What the call must bring, checked in its first seconds: tests/gpu/prepare.sh makes both.
hr "Inputs"
missing=()
if [[ $MODE == full ]]; then
  for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
              t10k-labels-idx1-ubyte; do
    [[ -f $DATA_DIR/$name || -f $DATA_DIR/$name.gz ]] || missing+=("$DATA_DIR/$name(.gz)")
  done
fi
if ! command -v mpirun >/dev/null 2>&1 && ! compgen -G "$DEBS_DIR/*.deb" >/dev/null; then
  missing+=("$DEBS_DIR/*.deb (this machine has no mpirun: the build takes Open MPI from there)")
fi
if ((${#missing[@]})); then
  die 2 "missing:$(printf '\n  - %s' "${missing[@]}")
Make them with tests/gpu/prepare.sh (or set MNIST_DDP_DATA, GPU_CHECK_DEBS) and bring them along:
tests/gpu/README.md gives the device call and what it carries."
fi
if [[ $MODE == full ]]; then
  DATA_DIR=$(cd "$DATA_DIR" && pwd)
  say "data          $DATA_DIR"
fi
[[ ! -d $DEBS_DIR ]] || say "debs          $DEBS_DIR ($(find "$DEBS_DIR" -name '*.deb' | wc -l) files)"

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
# The LibTorch scripts/setup.sh would build against, so these checks prove the README's commands;
# a CUDA torch's is named from the facts above, which saves find_torch a second import of torch.
torch_cuda=$(fact cuda_version)
if [[ -z ${TORCH_DIR:-}${Torch_DIR:-} && $torch_cuda != None && $torch_cuda != '?' ]]; then
  TORCH_DIR=$(torch_fact cmake_prefix_path)
  export TORCH_DIR
fi
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

# The programs, the GPUs and the checks' settings: the time plan below needs them.
BIN=$BUILD_DIR/mnist_ddp
TESTS_BIN=$BUILD_DIR/tests/mpi_tests
BENCH_BIN=$BUILD_DIR/allreduce_bench
MPIRUN=mpirun  # until deps.sh names the one that starts processes
# The targets the selected checks run: mpi_tests only for its test cases' checks.
TARGETS=(mnist_ddp allreduce_bench)
for name in graph_replay_tests nccl_tests nccl_tests_more_ranks; do
  if [[ $MODE == build || -z $ONLY || $name =~ $ONLY ]]; then
    TARGETS+=(mpi_tests)
    break
  fi
done
if [[ $MODE == full || $MODE == plan ]]; then
  NGPU=$(torch_fact device_count)
  if ! [[ $NGPU =~ ^[0-9]+$ ]] || ((NGPU == 0)); then
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  fi
  if ((NGPU == 0)) && [[ $MODE == plan ]]; then
    NGPU=1
    say "no GPU is visible: the plan is for one"
  elif ((NGPU == 0)); then
    die 2 "no CUDA device is visible (torch: device_count=$(torch_fact device_count)," \
          "$(torch_fact cuda_error); nvidia-smi -L lists none)"
  fi
  say "$NGPU GPU(s): one rank per GPU"
  hr "Time plan (seconds from the start; GPU_CHECK_DEADLINE $DEADLINE, 0: none)"
  PLAN_AT=$((SECONDS - SCRIPT_START + SETUP_ESTIMATE))
  say "dependencies and configure ~$SETUP_ESTIMATE s; build of ${TARGETS[*]} ~$(build_estimate) s" \
    "on $(nproc) cores (estimate: tests/gpu/README.md, \"The time plan\")"
  PLAN_AT=$((PLAN_AT + $(build_estimate)))
  PLANNING=1 gpu_checks
  ! bench_selected || say "then graph_bench within ${BENCH_TIMEOUT} s, or what is left"
  [[ $MODE != plan ]] || { say "--plan-only: done"; exit 0; }
fi

# ---------------------------------------------------------------------------------------------
hr "Dependencies"
# shellcheck source=tests/gpu/deps.sh
source "$ROOT/tests/gpu/deps.sh"
[[ $MODE == deps ]] && { say "--deps-only: done"; exit 0; }

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
# Unity batches, as the default build: a third of the CPU-seconds of one compile a source, and a
# shorter longest compile; ctest build_libtorch2 compiles the same batches against LibTorch 2.x.
configure_args=(-S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release
                "${TORCH_CONFIGURE_ARGS[@]}" "${CMAKE_HINTS[@]}")
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
copy_out >/dev/null
[[ $MODE == configure ]] && { say "--configure-only: done"; exit 0; }

step_start=$SECONDS
# Keep going past a failed file, so that one build shows every error.
keep_going=(-k)
((${#GENERATOR[@]})) && keep_going=(-k 0)
# The build's time limit: BUILD_TIMEOUT, within the deadline.
BUILD_LIMIT=$(within_deadline "$BUILD_TIMEOUT" 20)
((BUILD_LIMIT > 0)) || die 1 "GPU_CHECK_DEADLINE leaves no time for the build"
say "building ${TARGETS[*]} (estimate ~$(build_estimate) s, limit $BUILD_LIMIT s)"
# build LOG: builds the selected programs within what is left of BUILD_LIMIT.
build() {
  timeout "$((BUILD_LIMIT - (SECONDS - step_start)))" cmake --build "$BUILD_DIR" \
    --target "${TARGETS[@]}" --parallel "$(nproc)" -- "${keep_going[@]}" >"$1" 2>&1
}
show_build_errors() {
  grep -E -B2 -A12 'error|Error' "$1" | head -80 >&2 || tail -60 "$1" >&2
}
# Set when the capture code did not build and the checks run on a build without it.
GRAPHS_BUILD_FAILURE=""
if ! build "$LOG_DIR/build.log"; then
  show_build_errors "$LOG_DIR/build.log"
  if ! grep -q '^-- CUDA graphs: built' "$LOG_DIR/configure.log" \
     || ((SECONDS - step_start >= BUILD_LIMIT)); then
    die 1 "build failed or passed its ${BUILD_LIMIT} s (log: $LOG_DIR/build.log)"
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
say "built ${TARGETS[*]} in $((SECONDS - step_start)) s"
copy_out >/dev/null
{
  ldd "$BIN" | grep -E 'libmpi|libnccl|libcudart|libtorch_cuda|libc10_cuda|libboost_pro|libprotobuf' \
    || true
} | tee "$LOG_DIR/ldd.log" | sed 's/^/#   /'
timeout 60 "$MPIRUN" -np 1 "$BIN" --version >"$LOG_DIR/version.log" 2>&1 || true
sed 's/^/#   /' "$LOG_DIR/version.log"
[[ $MODE == build ]] && { say "--build-only: done"; exit 0; }

# ---------------------------------------------------------------------------------------------
hr "Runs"
RUNS_START=$SECONDS
[[ -z $GRAPHS_BUILD_FAILURE ]] || add_row build_cuda_graphs - - - - "FAIL: $GRAPHS_BUILD_FAILURE"
gpu_checks

# ---------------------------------------------------------------------------------------------
# The benchmark of --cuda-graph beside PyTorch on this GPU (bench/gpu/graph_bench.py), on the real
# MNIST: its report goes to LOG_DIR/graph_bench.md.
BENCH_LINE=""
if bench_selected; then
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
  not_run_line || true
} | tee "$LOG_DIR/summary.md"
if ((FAILED)); then
  echo "gpu check: FAILED (logs in $LOG_DIR)" >&2
  exit 1
fi
if ! not_run_line >/dev/null; then
  echo "gpu check: passed, but not every check ran (the summary's last line)" >&2
  exit 1
fi
echo "gpu check: all passed"
