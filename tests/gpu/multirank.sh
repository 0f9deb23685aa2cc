#!/usr/bin/env bash
# tests/gpu/multirank.sh — provides: multirank_checks, the checks of N ranks (8, 4 and 2) sharing
# one device, each rank an NCCL host of its own (own_nccl_host.sh): N ranks train as one rank does,
# a stalled or killed rank ends every rank, a checkpoint resumes at other world sizes, and
# allreduce_bench's results are right. tests/gpu/run.sh sources it and runs the checks with NCCL
# on the GPU after its build (GPU_CHECK_ONLY=multirank: these alone); run by itself it rehearses
# the same checks with MPI on the CPU (ctest e2e_gpu_multirank), the CUDA-graph ones on the CPU's
# stand-in for a replay (Note [Graphed steps rehearsed on the CPU], graphed_step.cpp).
#
#   tests/gpu/multirank.sh [--out DIR]
#
# Environment: MULTIRANK_BACKEND and MULTIRANK_DEVICE (nccl and cuda; mpi and cpu to rehearse),
# MULTIRANK_RANKS ('8 4 2'; the first, at least 4, also stalls, kills, checkpoints and captures),
# MULTIRANK_STEPS (100, at least 20), MULTIRANK_BUDGET (seconds for the whole set, 300),
# MULTIRANK_MPIRUN_ARGS (more mpirun arguments for the runs of several ranks, e.g. '-x
# LD_PRELOAD=...'). Run by itself also MNIST_DDP_BIN and ALLREDUCE_BENCH_BIN (the programs),
# MNIST_DDP_DATA, MPIRUN and run.sh's GPU_CHECK_OUT, GPU_CHECK_BUILD_DIR (the logs go to its
# multirank-check/), GPU_CHECK_RUN_TIMEOUT, GPU_CHECK_DEADLINE, GPU_CHECK_ONLY and PYTHON.
# Exit codes (by itself): 0 all checks passed, 1 a check failed, 2 bad settings.

MR_BACKEND=${MULTIRANK_BACKEND:-nccl}
MR_DEVICE=${MULTIRANK_DEVICE:-cuda}
read -r -a MR_RANKS <<<"${MULTIRANK_RANKS:-8 4 2}"
MR_STEPS=${MULTIRANK_STEPS:-100}
MR_BUDGET=${MULTIRANK_BUDGET:-300}
read -r -a MR_MPIRUN_ARGS <<<"${MULTIRANK_MPIRUN_ARGS:-}"
MR_WRAP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/own_nccl_host.sh

# The faults: rank 3 stops (SIGSTOP) or aborts after step 10, past the 3 eager warm-up steps of a
# captured step. Stalled, the others end after --comm-timeout, MPI's watchdog's 3 s for the other
# ranks' answers (kGraceSeconds) and the teardown; aborted, after the teardown alone.
# --comm-timeout also bounds the NCCL set-up and the first collectives, which on a GPU wait for
# eight processes to make their CUDA contexts (~0.5 s each, serialised by the driver) and load
# their kernels: 20 s there is four times the ~5 s that takes; 5 s on the CPU.
FAULT_RANK=3
FAULT_STEP=10
FAULT_TIMEOUT=5
[[ ${MULTIRANK_DEVICE:-cuda} != cuda ]] || FAULT_TIMEOUT=20
FAULT_GRACE=3
FAULT_TEARDOWN=5
# N ranks and 1 rank sum the same gradients in another order: <= 2.4e-9 on the CPU (40 steps).
EQUAL_RTOL=1e-5
# 8 ranks against 8 resumed at 4 and at 2: <= 5.3e-10 on the CPU (40 steps), so bits are not equal.
ELASTIC_RTOL=1e-6
# 8 B to 256 KiB, 6 sizes (the gradient buckets are 135 KiB and 784 KiB).
BENCH_SWEEP=(--min-bytes 8 --max-bytes 262144 --factor 8 --iters 5 --warmup 2)

# ran_as RANKS LOG: the run's summary says RANKS ranks, the backend and device asked for.
ran_as() {
  local metrics=${2%.log}.jsonl field want got
  for field in world_size:$1 backend:$MR_BACKEND device:$MR_DEVICE; do
    want=${field#*:}
    got=$(verdict summary "$metrics" "${field%%:*}")
    if [[ $got != "$want" ]]; then
      echo "the summary's ${field%%:*} is '$got', not '$want'"
      return 1
    fi
  done
}
# The run's world size, from its name (multirank_..._N).
ranks_of() { local name=${1%.log}; echo "${name##*_}"; }

# Equality: N ranks x batch 64/N end at the 1-rank x 64 run's test loss. The sampler gives rank r
# every N-th sample of one permutation, so the ranks' batches together are the 1-rank batch and the
# averaged gradients are its gradients, up to rounding.
same_as_1_rank() {
  ran_as "$(ranks_of "$1")" "$1" &&
    verdict ends-as "$LOG_DIR/multirank_reference.jsonl" "${1%.log}.jsonl" "$EQUAL_RTOL" 0.0005
}
# Graphed N ranks end as eager N ranks, and every rank replayed: the replayed allreduces reduce
# across ranks.
graphed_as_eager() {
  graph_on "$1" && ran_as "$(ranks_of "$1")" "$1" &&
    verdict replayed "${1%.log}.timeline.json" "$(ranks_of "$1")" &&
    verdict ends-as "$LOG_DIR/multirank_equality_${MR_RANKS[0]}.jsonl" "${1%.log}.jsonl" \
      "$EQUAL_RTOL" 0.0005
}
# A capture failed on rank 1 (planted): the summary says so, and every rank trained eagerly, ending
# as the eager run of as many ranks.
fell_back_to_eager() {
  local fallback
  fallback=$(verdict summary "${1%.log}.jsonl" cuda_graph_fallback)
  if [[ $fallback != "rank 1: "* ]]; then
    echo "the summary's cuda_graph_fallback is '$fallback', not rank 1's"
    return 1
  fi
  ran_as "$(ranks_of "$1")" "$1" &&
    verdict ends-as "$LOG_DIR/multirank_equality_${MR_RANKS[0]}.jsonl" "${1%.log}.jsonl" \
      "$EQUAL_RTOL" 0.0005
}
# The first rank count's graph holds more nodes than one rank's graph of the same batch, which
# communicates nothing, and every rank replayed it.
capture_holds_allreduces() {
  local many=$LOG_DIR/multirank_graphed_${MR_RANKS[0]}
  graph_on "$1" &&
    verdict capture "$many.jsonl" "${1%.log}.jsonl" "$many.timeline.json" "${MR_RANKS[0]}"
}
# The 1-rank --communicate-alone run allreduces what each of the first rank count's ranks does: the
# same bytes a step (summary) and the same buckets a step on every rank (timeline spans).
same_buckets_as_many() {
  local many=$LOG_DIR/multirank_equality_${MR_RANKS[0]}
  verdict buckets "$many.jsonl" "$many.timeline.json" "${1%.log}.jsonl" \
    "${1%.log}.timeline.json" "${MR_RANKS[0]}"
}

# The fault runs' output is stamped (STAMPED): ended_within SECONDS LOG KIND says whether the job
# ended at most SECONDS after rank FAULT_RANK said it would fail (KIND), and left no process.
ended_within() {
  local limit=$1 log=$2 kind=$3
  if pgrep -f -- "${log%.log}.jsonl" >/dev/null; then
    echo "processes left running: $(pgrep -af -- "${log%.log}.jsonl" | head -3)"
    return 1
  fi
  awk -v limit="$limit" -v rank="$FAULT_RANK" -v what="$kind after step $FAULT_STEP" '
    index($0, "[rank " rank "@") && index($0, "injected fault (MNIST_DDP_FAULT): " what) &&
      !fault { fault = $1 }
    $2 == "ended" { ended = $1 }
    END {
      if (!fault) { print "no line of rank " rank " saying \"" what "\""; exit 1 }
      if (!ended) { print "no end stamp"; exit 1 }
      if (ended - fault > limit) {
        printf "ended %.1f s after the fault (limit %d s)\n", ended - fault, limit; exit 1
      }
    }' "$log"
}
# A stalled rank: every rank ends with exit 5 (the caller's), and the wait is named: under MPI the
# watchdog names the rank that had not joined; NCCL's watchdog names only the waiting rank.
stalled_rank_ends_all() {
  ended_within $((FAULT_TIMEOUT + FAULT_GRACE + FAULT_TEARDOWN)) "$1" stop || return 1
  local named="still waiting after"
  [[ $MR_BACKEND != mpi ]] || named="rank(s) $FAULT_RANK@$(uname -n) not responding"
  grep -qF -- "$named" "$1" && return 0
  echo "no line saying '$named'"
  return 1
}
stalled_rank_ends_all_graphed() { graph_on "$1" && stalled_rank_ends_all "$1"; }
# A killed rank: mpirun names it as it ends every rank.
killed_rank_ends_all() {
  ended_within "$FAULT_TEARDOWN" "$1" abort || return 1
  grep -q "process rank $FAULT_RANK .*exited on signal" "$1" && return 0
  echo "mpirun does not say that rank $FAULT_RANK exited on a signal"
  return 1
}
killed_rank_ends_all_graphed() { graph_on "$1" && killed_rank_ends_all "$1"; }

# The resumed run started at the checkpoint of the first rank count and ended where that many
# ranks uninterrupted end.
resumed_as_uninterrupted() {
  if ! grep -q "# resume: .*(step $((MR_STEPS / 2)), epoch 1, written by ${MR_RANKS[0]} ranks)" \
       "$1"; then
    echo "the log does not say it resumed at step $((MR_STEPS / 2)) of ${MR_RANKS[0]} ranks"
    return 1
  fi
  ran_as "$(ranks_of "$1")" "$1" &&
    verdict ends-as "$LOG_DIR/multirank_equality_${MR_RANKS[0]}.jsonl" "${1%.log}.jsonl" \
      "$ELASTIC_RTOL" 0.0001
}

# allreduce_bench's table: its backend and rank count, every size of BENCH_SWEEP with no wrong
# element, and the verdict OK.
bench_right() {
  verdict bench "$1" "$(ranks_of "$1")" "$MR_BACKEND" "${BENCH_SWEEP[1]}" "${BENCH_SWEEP[3]}" \
    "${BENCH_SWEEP[5]}"
}

# mr_estimate RANKS STEPS [EXTRA]: the seconds a run of RANKS ranks and STEPS steps of the mlp is
# expected to take on one H200 (16 cores): a rank's start ~5 s, 8 ranks' ~10 s; a step <5 ms
# alone, ~0.1 s at 8 ranks (2 bucket allreduces time-sharing the GPU, ~40 ms each from ~13 ms
# reported at 3 ranks), ~0.05 s at 4, ~0.025 s at 2; plus EXTRA. The speed probe rescales them.
mr_estimate() {
  awk -v n="$1" -v steps="$2" -v extra="${3:-0}" 'BEGIN {
    many = n > 1
    printf "%d\n", 5 + many * 0.6 * n + steps * (many ? 0.0125 * n : 0.005) + extra + 0.5 }'
}

# multirank_checks: the checks, most telling first, each within what is left of MULTIRANK_BUDGET
# and of GPU_CHECK_DEADLINE; one that its estimate says cannot fit is not run, by name. The first
# is the speed probe (allreduce_bench at the first rank count, with NCCL's INIT and NET lines kept
# in nccl-info.*.log): its time against its estimate rescales the others'. Then equality, the
# captured collectives and the capture fallback at the first rank count, equality and the
# benchmark at the others, then the faults, the elastic resume and the buckets.
multirank_checks() {
  ((PLANNING)) || hr "Multi-rank on one device: ${MR_RANKS[*]} ranks, $MR_BACKEND on $MR_DEVICE, $MR_STEPS steps"
  require_seconds MULTIRANK_BUDGET
  [[ $MR_STEPS =~ ^[0-9]+$ ]] || die 2 "MULTIRANK_STEPS must be a whole number, not '$MR_STEPS'"
  local n
  for n in "${MR_RANKS[@]}"; do
    [[ $n =~ ^[0-9]+$ ]] && ((n > 1 && 64 % n == 0)) ||
      die 2 "MULTIRANK_RANKS: '$n' does not split the global batch 64 over ranks"
  done
  local max=${MR_RANKS[0]:-0} half=$((MR_STEPS / 2)) per=1
  ((max >= FAULT_RANK + 1 && MR_STEPS >= 2 * FAULT_STEP)) || die 2 "MULTIRANK_RANKS must start" \
    "at $((FAULT_RANK + 1)) or more and MULTIRANK_STEPS be $((2 * FAULT_STEP)) or more"
  # On the CPU the graphed runs are rehearsed (Note [Graphed steps rehearsed on the CPU]).
  local rehearse=() pass_on=()
  if [[ $MR_DEVICE != cuda ]]; then
    per=cpu
    rehearse=(env MNIST_DDP_REHEARSE_GRAPHS=1)
    pass_on=(-x MNIST_DDP_REHEARSE_GRAPHS)
  fi
  RUNS_START=$SECONDS
  RUN_BUDGET=$MR_BUDGET
  local mpi=("$MPIRUN" --bind-to none --oversubscribe)
  local many=("${mpi[@]}" "${MR_MPIRUN_ARGS[@]}")
  local train=(--model mlp --data-dir "$DATA_DIR" --epochs 1 --bucket-mb 0.25 --backend
    "$MR_BACKEND" --device "$MR_DEVICE" --progress lines --log-every $((MR_STEPS / 4)))
  local eager=("${train[@]}" --cuda-graph off --comm-timeout 60 --global-batch-size 64)
  local graphed=(-np "$max" "$MR_WRAP" "$BIN" "${train[@]}" --comm-timeout 60
    --global-batch-size 64 --max-steps "$MR_STEPS")
  local faulty=("${rehearse[@]}" "${STAMPED[@]}" "${many[@]}" -x MNIST_DDP_FAULT "${pass_on[@]}"
    -np "$max" "$MR_WRAP" "$BIN" "${train[@]}" --global-batch-size 64 --max-steps "$MR_STEPS"
    --comm-timeout "$FAULT_TIMEOUT")
  local stop=MNIST_DDP_FAULT=rank=$FAULT_RANK,step=$FAULT_STEP,kind=stop
  local abort=MNIST_DDP_FAULT=rank=$FAULT_RANK,step=$FAULT_STEP,kind=abort
  local bench=("$MR_WRAP" "$BENCH_BIN" "${BENCH_SWEEP[@]}" --backend "$MR_BACKEND")
  local nccl_info=(env NCCL_DEBUG=INFO "NCCL_DEBUG_SUBSYS=INIT,NET"
    "NCCL_DEBUG_FILE=$LOG_DIR/nccl-info.%h.%p.log")
  local fault_end=$((FAULT_TIMEOUT + FAULT_GRACE + FAULT_TEARDOWN))
  # The runs whose files the other checks' verdicts read.
  REFERENCE_CHECKS+=(multirank_reference "multirank_equality_$max" "multirank_graphed_$max")

  ESTIMATE[multirank_bench_$max]=$(mr_estimate "$max" 0 2)
  ESTIMATE[multirank_reference]=$(mr_estimate 1 "$MR_STEPS")
  ESTIMATE[multirank_capture_$max]=$(mr_estimate 1 "$MR_STEPS" 1)
  ESTIMATE[multirank_buckets]=$(mr_estimate 1 "$MR_STEPS")
  ESTIMATE[multirank_graphed_$max]=$(mr_estimate "$max" "$MR_STEPS" 2)
  ESTIMATE[multirank_fallback_$max]=$(mr_estimate "$max" "$MR_STEPS" 2)
  ESTIMATE[multirank_stall_$max]=$(mr_estimate "$max" "$FAULT_STEP" "$fault_end")
  ESTIMATE[multirank_stall_${max}_graphed]=$(mr_estimate "$max" "$FAULT_STEP" $((fault_end + 2)))
  ESTIMATE[multirank_kill_$max]=$(mr_estimate "$max" "$FAULT_STEP" "$FAULT_TEARDOWN")
  ESTIMATE[multirank_kill_${max}_graphed]=$(mr_estimate "$max" "$FAULT_STEP" \
    $((FAULT_TEARDOWN + 2)))
  ESTIMATE[multirank_elastic_checkpoint_$max]=$(mr_estimate "$max" "$half" 2)
  for n in "${MR_RANKS[@]}"; do
    ESTIMATE[multirank_equality_$n]=$(mr_estimate "$n" "$MR_STEPS")
    ESTIMATE[multirank_bench_$n]=$(mr_estimate "$n" 0 2)
    ESTIMATE[multirank_elastic_resume_$n]=$(mr_estimate "$n" "$half")
  done

  # The speed probe: the first NCCL communicator of max ranks, and every allreduce right.
  check "multirank_bench_$max" "$max/$per" - 0 bench_right -- "${nccl_info[@]}" "${many[@]}" \
    -np "$max" "${bench[@]}"
  rescale_estimates "multirank_bench_$max"
  check multirank_reference "1/$per" - 0 - -- "${mpi[@]}" -np 1 "$BIN" "${eager[@]}" \
    --max-steps "$MR_STEPS" --metrics-file "$LOG_DIR/multirank_reference.jsonl"
  # Its timeline also serves the bucket check.
  check "multirank_equality_$max" "$max/$per" - 0 same_as_1_rank -- "${many[@]}" -np "$max" \
    "$MR_WRAP" "$BIN" "${eager[@]}" --max-steps "$MR_STEPS" \
    --metrics-file "$LOG_DIR/multirank_equality_$max.jsonl" \
    --timeline "$LOG_DIR/multirank_equality_$max.timeline.json"
  # The captured collectives, then one rank's graph of the same batch (no collective).
  check "multirank_graphed_$max" "$max/$per" - 0 graphed_as_eager -- "${rehearse[@]}" \
    "${many[@]}" "${pass_on[@]}" "${graphed[@]}" --cuda-graph on \
    --metrics-file "$LOG_DIR/multirank_graphed_$max.jsonl" \
    --timeline "$LOG_DIR/multirank_graphed_$max.timeline.json"
  check "multirank_capture_$max" "1/$per" - 0 capture_holds_allreduces -- "${rehearse[@]}" \
    "${mpi[@]}" -np 1 "$BIN" "${train[@]}" --cuda-graph on --comm-timeout 60 \
    --global-batch-size $((64 / max)) --max-steps "$MR_STEPS" \
    --metrics-file "$LOG_DIR/multirank_capture_$max.jsonl"
  # A capture that fails on rank 1 under --cuda-graph auto.
  check "multirank_fallback_$max" "$max/$per" - 0 fell_back_to_eager -- \
    env MNIST_DDP_FAULT=rank=1,phase=capture,kind=throw "${rehearse[@]}" "${many[@]}" \
    "${pass_on[@]}" -x MNIST_DDP_FAULT "${graphed[@]}" --cuda-graph auto \
    --metrics-file "$LOG_DIR/multirank_fallback_$max.jsonl"
  for n in "${MR_RANKS[@]:1}"; do
    check "multirank_equality_$n" "$n/$per" - 0 same_as_1_rank -- "${many[@]}" -np "$n" \
      "$MR_WRAP" "$BIN" "${eager[@]}" --max-steps "$MR_STEPS" \
      --metrics-file "$LOG_DIR/multirank_equality_$n.jsonl"
    check "multirank_bench_$n" "$n/$per" - 0 bench_right -- "${many[@]}" -np "$n" "${bench[@]}"
  done
  # Start, 10 steps, --comm-timeout, the grace and the teardown; a kill needs the teardown alone.
  check "multirank_stall_$max" "$max/$per" - 5 stalled_rank_ends_all -- env "$stop" \
    "${faulty[@]}" --cuda-graph off --metrics-file "$LOG_DIR/multirank_stall_$max.jsonl"
  check "multirank_kill_$max" "$max/$per" - 134 killed_rank_ends_all -- env "$abort" \
    "${faulty[@]}" --cuda-graph off --metrics-file "$LOG_DIR/multirank_kill_$max.jsonl"
  # max ranks to the middle, then the other counts from there to the end.
  rm -rf "$LOG_DIR/multirank_checkpoints"
  check "multirank_elastic_checkpoint_$max" "$max/$per" - 0 - -- "${many[@]}" -np "$max" \
    "$MR_WRAP" "$BIN" "${eager[@]}" --max-steps "$half" \
    --checkpoint-every "$half" --checkpoint-dir "$LOG_DIR/multirank_checkpoints" \
    --metrics-file "$LOG_DIR/multirank_elastic_checkpoint_$max.jsonl"
  for n in "${MR_RANKS[@]:1}"; do
    check "multirank_elastic_resume_$n" "$n/$per" - 0 resumed_as_uninterrupted -- "${many[@]}" \
      -np "$n" "$MR_WRAP" "$BIN" "${eager[@]}" --max-steps "$MR_STEPS" \
      --resume "$LOG_DIR/multirank_checkpoints/$(printf 'ckpt-step-%09d.mddp' "$half")" \
      --metrics-file "$LOG_DIR/multirank_elastic_resume_$n.jsonl"
  done
  check multirank_buckets "1/$per" - 0 same_buckets_as_many -- "${mpi[@]}" -np 1 "$BIN" \
    "${eager[@]}" --max-steps "$MR_STEPS" --communicate-alone \
    --metrics-file "$LOG_DIR/multirank_buckets.jsonl" \
    --timeline "$LOG_DIR/multirank_buckets.timeline.json"
  # The faults during replays.
  check "multirank_stall_${max}_graphed" "$max/$per" - 5 stalled_rank_ends_all_graphed -- \
    env "$stop" "${faulty[@]}" --cuda-graph on \
    --metrics-file "$LOG_DIR/multirank_stall_${max}_graphed.jsonl"
  check "multirank_kill_${max}_graphed" "$max/$per" - 134 killed_rank_ends_all_graphed -- \
    env "$abort" "${faulty[@]}" --cuda-graph on \
    --metrics-file "$LOG_DIR/multirank_kill_${max}_graphed.jsonl"
}

# The command with its output, each line after the time it was read, then that time and "ended":
# the fault checks measure from these stamps.
# shellcheck disable=SC2016  # the script is bash -c's, expanded there
STAMPED=(bash -c 'set -o pipefail
"$@" 2>&1 | while IFS= read -r line; do printf "%s %s\n" "${EPOCHREALTIME/[!0-9]/.}" "$line"; done
status=$?
printf "%s ended\n" "${EPOCHREALTIME/[!0-9]/.}"
exit "$status"' stamped)

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPT_START=$SECONDS
OUT_DIR=${GPU_CHECK_OUT:-}
case ${1:-} in
  --out) OUT_DIR=${2:?--out needs a folder} ;;
  --out=*) OUT_DIR=${1#--out=} ;;
  "") ;;
  *) sed -n '9p' "$0" >&2; exit 2 ;;
esac
BIN=${MNIST_DDP_BIN:?set MNIST_DDP_BIN to the mnist_ddp executable}
BENCH_BIN=${ALLREDUCE_BENCH_BIN:?set ALLREDUCE_BENCH_BIN to the allreduce_bench executable}
DATA_DIR=${MNIST_DDP_DATA:-$ROOT/data/fashion-mnist}
LOG_DIR=${GPU_CHECK_BUILD_DIR:-$ROOT/build-gpu}/multirank-check
RUN_TIMEOUT=${GPU_CHECK_RUN_TIMEOUT:-90}
DEADLINE=${GPU_CHECK_DEADLINE:-0}
ONLY=${GPU_CHECK_ONLY:-}
PYTHON=${PYTHON:-python3}
MPIRUN=${MPIRUN:-mpirun}
# shellcheck source=tests/gpu/check_harness.sh
source "$ROOT/tests/gpu/check_harness.sh"
require_seconds GPU_CHECK_RUN_TIMEOUT GPU_CHECK_DEADLINE
trap copy_out EXIT
# shellcheck source=tests/gpu/log_checks.sh
source "$ROOT/tests/gpu/log_checks.sh"

hr "Time plan: ${MR_RANKS[*]} ranks, $MR_BACKEND on $MR_DEVICE, $MR_STEPS steps (seconds from the" \
  "start; GPU_CHECK_DEADLINE $DEADLINE, 0: none)"
PLAN_AT=$((SECONDS - SCRIPT_START))
PLANNING=1 multirank_checks
multirank_checks
hr "Summary"
{
  echo "Multi-rank checks of mnist_ddp on $(uname -n): ${MR_RANKS[*]} ranks on one device," \
    "$MR_BACKEND on $MR_DEVICE, $MR_STEPS steps; $((SECONDS - SCRIPT_START)) s in all"
  echo
  summary_table
  not_run_line || true
} | tee "$LOG_DIR/summary.md"
if ((FAILED)); then
  echo "multirank check: FAILED (logs in $LOG_DIR)" >&2
  exit 1
fi
if ! not_run_line >/dev/null; then
  echo "multirank check: passed, but not every check ran" >&2
  exit 1
fi
echo "multirank check: all passed"
