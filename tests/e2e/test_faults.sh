#!/usr/bin/env bash
# End to end: one rank fails (MNIST_DDP_FAULT: throw, abort, exit, hang, stop) under 2 and 4
# ranks. The whole job ends promptly with a non-zero exit, stderr names the failing rank, its
# host and the cause (for a stalled rank: the collective and the rank that had not joined), the
# last checkpoint stays intact, and a rerun with --resume auto completes. A rank that hangs while
# loading the data ends the job with exit 5 after --comm-timeout, named with its host and the
# phase. A rank whose MPI start-up fails ends the job with exit 5 too.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
: "${FAIL_MPI_START_LIB:?set FAIL_MPI_START_LIB to the fail_mpi_start library}"

HOST=$(hostname)
TIMEOUT=3  # --comm-timeout, seconds
# Linear model, 40 steps, a checkpoint every 10; the fault comes after step 25.
RUN=(--data-dir "$FASHION_DIR" --epochs 1 --max-steps 40 --threads 1 --checkpoint-every 10
  --comm-timeout "$TIMEOUT")

# How long, at most, each part of ending a job may take, in seconds.
GRACE=3 # the watchdog's wait for the other ranks' answers (kGraceSeconds, mpi_watchdog.cpp)
ABORT=5 # from a rank's abort or exit to mpirun's, killing 4 ranks on 2 busy cores
LOAD=10 # the other ranks loading the data, 4 ranks on 2 busy cores

# run_fault RANKS FAULT: the run with MNIST_DDP_FAULT=FAULT, stderr stamped as it arrives; sets
# STATUS and SECONDS_TAKEN, from the failing rank's "injected fault" line to mpirun's exit
# (empty without that line).
run_fault() {
  local ranks=$1 fault=$2 stamper ended faulted
  rm -rf "$WORK/ckpt"
  exec 3> >(stamp >"$WORK/err")
  stamper=$!
  STATUS=0
  MNIST_DDP_FAULT="$fault" timeout 120 \
    mpirun -np "$ranks" --oversubscribe -x MNIST_DDP_FAULT "$MNIST_DDP_BIN" "${RUN[@]}" \
    --checkpoint-dir "$WORK/ckpt" >"$WORK/out" 2>&3 3>&- || STATUS=$?
  ended=$(date +%s.%N)
  exec 3>&-
  wait "$stamper"
  faulted=$(awk '/injected fault \(MNIST_DDP_FAULT\)/ {print $1; exit}' "$WORK/err")
  SECONDS_TAKEN=
  [[ -z $faulted ]] ||
    SECONDS_TAKEN=$(awk -v from="$faulted" -v to="$ended" 'BEGIN {printf "%.1f", to - from}')
}

# expect_prompt SECONDS WHAT: the job ended at most SECONDS after the fault (run_fault).
expect_prompt() {
  if [[ -z $SECONDS_TAKEN ]]; then
    fail "$2: no 'injected fault' line on stderr"
  elif awk -v taken="$SECONDS_TAKEN" -v limit="$1" 'BEGIN {exit !(taken <= limit)}'; then
    pass "$2: ended $SECONDS_TAKEN s after the fault"
  else
    fail "$2: ended $SECONDS_TAKEN s after the fault (limit $1 s)"
  fi
}

# expect_in_err TEXT WHAT
expect_in_err() {
  if grep -qF -- "$1" "$WORK/err"; then pass "$2"; else
    fail "$2: '$1' not in stderr"
    sed 's/^/  | /' "$WORK/err" | head -20 >&2
  fi
}

for ranks in 2 4; do
  failing=$((ranks - 1))
  for kind in throw abort exit hang stop; do
    what="$ranks ranks, $kind on rank $failing"
    run_fault "$ranks" "rank=$failing,step=25,kind=$kind"
    case $kind in
      throw) expected=1 ;;
      abort) expected=134 ;; # 128 + SIGABRT, as mpirun reports it
      exit) expected=7 ;;
      hang | stop) expected=5 ;;
    esac
    expect_exit "$expected" "$what"
    # A rank that ended takes the job down at once; a stalled one, after the others' timeout and
    # the watchdog's grace.
    limit=$ABORT
    [[ $kind == hang || $kind == stop ]] && limit=$((TIMEOUT + GRACE + ABORT))
    expect_prompt "$limit" "$what"
    expect_in_err "[rank $failing@$HOST] injected fault (MNIST_DDP_FAULT): $kind after step 25" \
      "$what: stderr names the rank, host and cause"
    if [[ $kind == hang || $kind == stop ]]; then
      expect_in_err "still waiting after $TIMEOUT s: rank " "$what: the watchdog names the wait"
      expect_in_err "rank(s) $failing@$HOST not responding" \
        "$what: and the rank that had not joined, with its host"
      expect_in_err "all_reduce" "$what: and the collective"
    fi
    # The checkpoint of step 20 is intact: resuming from it completes the run.
    newest=$(find "$WORK/ckpt" -maxdepth 1 -name 'ckpt-step-*.mddp' | sort | tail -1)
    [[ $newest == */ckpt-step-000000020.mddp ]] && pass "$what: checkpoint of step 20 kept" ||
      fail "$what: newest checkpoint is '$newest'"
    [[ -z $(find "$WORK/ckpt" -maxdepth 1 -name '*.tmp*') ]] || fail "$what: a temporary file was left behind"
    run_mpi "$ranks" "${RUN[@]}" --checkpoint-dir "$WORK/ckpt" --resume auto
    expect_exit 0 "$what: --resume auto completes"
    expect_once out \
      "# resume: $WORK/ckpt/ckpt-step-000000020.mddp (step 20, epoch 1, written by $ranks ranks)" \
      "$what: resumed from step 20"
  done
done

# A rank that hangs while loading the data: the others wait in the agreement that ends that phase,
# under the same watchdog as training's collectives.
for ranks in 2 4; do
  failing=$((ranks - 1))
  what="$ranks ranks, rank $failing hangs while loading the data"
  run_fault "$ranks" "rank=$failing,phase=load,kind=hang"
  expect_exit 5 "$what"
  # The hang comes before the others load the data and start their wait.
  expect_prompt $((LOAD + TIMEOUT + GRACE + ABORT)) "$what"
  expect_in_err "[rank $failing@$HOST] injected fault (MNIST_DDP_FAULT): hang while loading the data" \
    "$what: the hanging rank says so"
  expect_in_err "the agreement after loading the data (collective #" "$what: the phase is named"
  expect_in_err "still waiting after $TIMEOUT s: rank " "$what: the watchdog names the wait"
  expect_in_err "rank(s) $failing@$HOST not responding" "$what: and the rank, with its host"
done

expect_no_process_left "every run above (each names \$WORK/ckpt)"

# A rank whose MPI start-up fails (a preloaded shim fails its MPI_Comm_split_type, in which the
# other rank waits): exit 5 on every rank, and the failing rank names the call.
STATUS=0
timeout 60 mpirun -np 2 -x LD_PRELOAD="$FAIL_MPI_START_LIB" "$MNIST_DDP_BIN" "${RUN[@]}" \
  >"$WORK/out" 2>"$WORK/err" || STATUS=$?
expect_exit 5 "MPI start-up failing on rank 1"
expect_once err "mnist_ddp: error: [rank 1@$HOST] MPI_Comm_split_type(" \
  "the rank whose start-up failed names the call"

# A malformed fault description is a usage error on every rank.
STATUS=0
MNIST_DDP_FAULT="rank=1,step=2,kind=explode" timeout 60 mpirun -np 2 -x MNIST_DDP_FAULT \
  "$MNIST_DDP_BIN" "${RUN[@]}" >"$WORK/out" 2>"$WORK/err" || STATUS=$?
expect_exit 2 "malformed MNIST_DDP_FAULT"
expect_once err "MNIST_DDP_FAULT='rank=1,step=2,kind=explode': unknown kind 'explode'" \
  "the message names the variable and the problem"

finish
