#!/usr/bin/env bash
# tests/slurm/test_slurm.sh — slurm/mnist_ddp.sbatch, unchanged, on a real Slurm cluster started
# on this machine by tests/slurm/cluster.sh; only sbatch options and the environment differ from
# what a user submits. Layouts: one node with two (fake) GPUs; two nodes, each in its own network
# namespace with its own address and hostname, without GPUs (the CPU switch --gpus-per-node=0).
#
# Checks, for srun --mpi=pmix and for mpirun inside the allocation: the job completes; ranks ran
# on the nodes expected (the layout lines of the log); only rank 0 logged; the final test
# accuracy equals, within 1e-6, the same run under plain mpirun on one node. With checkpoint
# support in the program: a job signalled with USR1 (to its steps, and to the batch shell as
# --signal=B:USR1@... does) writes a checkpoint, exits 6, is requeued by the script, resumes and
# ends with the accuracy of an uninterrupted run; only rank 0 wrote checkpoints (the other node
# sees the checkpoint folder read-only); a plain scancel leaves the job cancelled, not requeued.
#
# The installed batch script (cmake --install) runs the installed program from PATH. A rank on
# the second node that throws, exits without a word, aborts or is killed (kill -9) ends the job
# within a minute (not after the default --comm-timeout of 300 s), named in the log; a hung one
# through the watchdog.
#
# Environment: MNIST_DDP_BIN (the program; required), MNIST_DDP_SOURCE_DIR (the repository;
# default: two folders up), MNIST_DDP_BUILD_DIR (the build folder to install from; without it
# the installed batch script is not tried), SLURM_TEST_KEEP=1 keeps the work folder. Needs root
# (daemons and network namespaces); exits 77 (skipped) without it. Everything started is torn
# down on exit, also when a check fails or the test is interrupted.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${MNIST_DDP_SOURCE_DIR:-$(cd "$HERE/../.." && pwd)}
SBATCH_SCRIPT=$ROOT/slurm/mnist_ddp.sbatch
CLUSTER=$HERE/cluster.sh
FASHION_DIR=/usr/share/datasets/fashion-mnist
: "${MNIST_DDP_BIN:?set MNIST_DDP_BIN to the mnist_ddp executable}"
export MNIST_DDP_BIN
# Open MPI refuses to start as root without these; sbatch carries them into the jobs.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: the Slurm tests need root (Slurm daemons, network namespaces)"
  exit 77
fi
if ! unshare --net --uts --mount true 2>/dev/null; then
  echo "SKIP: cannot create namespaces here (an unprivileged container?); the Slurm tests need them"
  exit 77
fi
[[ -x $MNIST_DDP_BIN ]] || {
  echo "FAIL: MNIST_DDP_BIN=$MNIST_DDP_BIN is not an executable" >&2
  exit 1
}
[[ -f $FASHION_DIR/train-images-idx3-ubyte.gz ]] || {
  echo "FAIL: Fashion-MNIST missing: apt-get install dataset-fashion-mnist" >&2
  exit 1
}

# One cluster at a time on a machine: names, addresses and ports are global. The daemons must
# not inherit the lock (a leftover one would hold it), hence 9>&- wherever they are started.
exec 9>/run/lock/mnist_ddp-slurm-test.lock
flock -w 900 9 || {
  echo "FAIL: another Slurm test holds /run/lock/mnist_ddp-slurm-test.lock" >&2
  exit 1
}

WORK=$(mktemp -d /tmp/mnist_ddp-slurm.XXXXXX)
export SLURMCI_BASE=/tmp/slurmci SLURM_CONF=/tmp/slurmci/etc/slurm.conf
FAILURES=0
START=$SECONDS

cluster() { "$CLUSTER" "$@" 9>&-; }

cleanup() {
  local status=$?
  cluster down || echo "WARNING: cluster teardown reported an error" >&2
  if ((FAILURES)) || [[ -n ${SLURM_TEST_KEEP:-} ]]; then
    echo "work folder kept: $WORK (cluster logs: $SLURMCI_BASE/log)" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}
pass() { echo "ok: $*"; }
note() { echo "-- $* ($((SECONDS - START)) s)"; }

# show_log NAME: the end of a job's log and of the daemons' logs, to see why a check failed.
show_log() {
  sed 's/^/  | /' "$WORK/$1.out" 2>/dev/null | tail -25 >&2 || true
  tail -n 5 "$SLURMCI_BASE"/log/*.log 2>/dev/null | sed 's/^/  || /' >&2 || true
}

# --- jobs ----------------------------------------------------------------------------------------

# submit NAME SBATCH_OPTION... -- PROGRAM_ARG...: submits the batch script (SUBMIT_SCRIPT, default
# the repository's) as a user would, from the work folder (SUBMIT_DIR); prints the job id. The
# log is $WORK/NAME.out.
submit() {
  local name=$1 options=()
  shift
  while (($#)) && [[ $1 != -- ]]; do
    options+=("$1")
    shift
  done
  shift
  (cd "${SUBMIT_DIR:-$WORK}" && sbatch --parsable --job-name="$name" --output="$WORK/$name.out" \
    --time=10 --cpus-per-task=1 "${options[@]}" "${SUBMIT_SCRIPT:-$SBATCH_SCRIPT}" "$@")
}

# job_field ID FIELD: one field of `scontrol show job` (empty once the job is forgotten).
job_field() {
  local line
  line=$(scontrol show job -o "$1" 2>/dev/null) || return 0
  awk -v key="$2=" '{for (i = 1; i <= NF; i++) if (index($i, key) == 1) {
                       print substr($i, length(key) + 1); exit }}' <<<"$line"
}

# wait_state ID SECONDS STATE...: polls every 0.25 s (sbatch --wait polls only every 10 s) until
# the job is in one of the states; returns 1 on timeout. Prints nothing.
wait_state() {
  local id=$1 polls=$(($2 * 4)) state
  shift 2
  while ((polls-- > 0)); do
    state=$(job_field "$id" JobState)
    for wanted in "$@"; do [[ $state == "$wanted" ]] && return 0; done
    sleep 0.25
  done
  return 1
}

readonly ENDED=(COMPLETED FAILED CANCELLED TIMEOUT NODE_FAIL PREEMPTED OUT_OF_MEMORY BOOT_FAIL
  DEADLINE)

# expect_completed NAME ID: the job ended with state COMPLETED and exit code 0.
expect_completed() {
  if ! wait_state "$2" 180 "${ENDED[@]}"; then
    fail "$1: job $2 still $(job_field "$2" JobState) after 180 s"
    show_log "$1"
    return 1
  fi
  local state exit_code
  state=$(job_field "$2" JobState) exit_code=$(job_field "$2" ExitCode)
  if [[ $state == COMPLETED && $exit_code == 0:0 ]]; then pass "$1: job completed, exit 0"; else
    fail "$1: job ended $state with exit code $exit_code"
    show_log "$1"
    return 1
  fi
}

# --- checks on a finished job --------------------------------------------------------------------

# count_lines NAME TEXT: lines of the job log holding TEXT.
count_lines() { grep -cF -- "$2" "$WORK/$1.out" || true; }

# expect_layout NAME RANKS NODES_TEXT HOST...: rank 0 printed the layout once, with RANKS ranks
# on NODES_TEXT ("1 node", "2 nodes"), rank r running on the r-th HOST; and only rank 0 logged.
expect_layout() {
  local name=$1 ranks=$2 nodes_text=$3 hosts
  shift 3
  local expected="$*"
  if [[ $(count_lines "$name" "# layout: $ranks ranks on $nodes_text") -eq 1 ]]; then
    pass "$name: layout printed once: $ranks ranks on $nodes_text"
  else
    fail "$name: no single '# layout: $ranks ranks on $nodes_text' line"
    show_log "$name"
  fi
  # The rows under the layout line: "#   <rank>  <host>  <local_rank>  <device>  <threads>".
  hosts=$(awk '/^# layout:/ {rows = 1; next} rows && /^# +rank / {next}
               rows && /^# +[0-9]+ / {print $3; next} rows {exit}' "$WORK/$name.out" | paste -sd' ')
  if [[ $hosts == "$expected" ]]; then pass "$name: ranks ran on: $hosts"; else
    fail "$name: ranks ran on '$hosts', expected '$expected'"
  fi
  # Only rank 0 logs: every rank printing would repeat these lines.
  if [[ $(count_lines "$name" "# data: ") -eq 1 &&
    $(count_lines "$name" "# final test_acc") -eq 1 ]]; then
    pass "$name: only rank 0 logged"
  else
    fail "$name: more than rank 0 logged"
    show_log "$name"
  fi
}

# summary_field FILE KEY: KEY of the last summary record of a metrics file.
summary_field() {
  python3 - "$1" "$2" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
summaries = [r for r in records if r.get("event") == "summary"]
print(repr(summaries[-1][sys.argv[2]]) if summaries else "none")
PY
}

# expect_same_accuracy NAME METRICS REFERENCE_METRICS WORLD_SIZE
expect_same_accuracy() {
  local name=$1 got want size
  got=$(summary_field "$2" test_accuracy 2>/dev/null || echo none)
  want=$(summary_field "$3" test_accuracy 2>/dev/null || echo none)
  size=$(summary_field "$2" world_size 2>/dev/null || echo none)
  if [[ $size != "$4" ]]; then fail "$name: world_size $size in the metrics, expected $4"; fi
  if python3 -c "import sys; sys.exit(0 if abs(float('$got') - float('$want')) <= 1e-6 else 1)" \
    2>/dev/null; then
    pass "$name: final test accuracy $got equals plain mpirun's $want (world size $4)"
  else
    fail "$name: final test accuracy $got differs from plain mpirun's $want (world size $4)"
  fi
}

# expect_same_blas NAME: the job's BLAS line (which OpenBLAS core runs and why, Note [BLAS core])
# equals that of plain mpirun on this host.
expect_same_blas() {
  local got want
  got=$(grep -m1 "^# BLAS " "$WORK/$1.out" || true)
  want=$(grep -m1 "^# BLAS " "$WORK/ref-2.out" || true)
  if [[ -n $got && $got == "$want" ]]; then
    pass "$1: the BLAS core as under plain mpirun: ${got##*; }"
  else
    fail "$1: BLAS line '$got', plain mpirun's '$want'"
  fi
}

# reference NAME RANKS ARG...: the same training under plain mpirun on this host.
reference() {
  local name=$1 ranks=$2
  shift 2
  if (cd "$WORK" && timeout 300 mpirun -np "$ranks" --oversubscribe "$MNIST_DDP_BIN" "$@" \
    --metrics-file "$WORK/$name.jsonl" >"$WORK/$name.out" 2>&1); then
    pass "reference: plain mpirun -np $ranks: $(grep '# final test_acc' "$WORK/$name.out")"
  else
    fail "reference: plain mpirun -np $ranks failed"
    show_log "$name"
  fi
}

# --- preemption ----------------------------------------------------------------------------------

# preempt NAME HOW SBATCH_OPTION... -- PROGRAM_ARG...: submits, waits for the first periodic
# checkpoint (training is under way), signals USR1 (HOW: "steps" like `scancel --signal=USR1`,
# or "batch" like --signal=B:USR1@...) or kills rank 1 (HOW: "kill", kill -9 as the OOM killer
# does), lets the requeued job start at once and waits for it.
preempt() {
  local name=$1 how=$2 id tries
  shift 2
  id=$(submit "$name" "$@")
  local ckpt_dir=$WORK/ckpt/$name
  for ((tries = 0; tries < 1200; tries++)); do
    compgen -G "$ckpt_dir/ckpt-step-*.mddp" >/dev/null && break
    [[ $(job_field "$id" JobState) == @(PENDING|RUNNING|CONFIGURING) ]] || break
    sleep 0.1
  done
  if ! compgen -G "$ckpt_dir/ckpt-step-*.mddp" >/dev/null; then
    fail "$name: no periodic checkpoint appeared in $ckpt_dir (job $(job_field "$id" JobState))"
    show_log "$name"
    return
  fi
  local first_end="launcher exited with 6" requeued="# slurm: preempted; checkpoint written"
  if [[ $how == batch ]]; then
    scancel --batch --signal=USR1 "$id"
  elif [[ $how == kill ]]; then
    kill -9 "$(rank_pid "$id" 1)"
    first_end="launcher exited with 1[3-9][0-9]"
    requeued="# slurm: a rank or a collective failed (exit 1[3-9][0-9]): failure requeue 1 of 3"
  else
    scancel --signal=USR1 "$id"
  fi
  # The script requeues on exit 6; Slurm then holds the job for about 2 minutes
  # (Reason=BeginTime), which a test need not wait for. But a start within the second in which
  # slurmd revoked the job's credential fails ("Job credential revoked": the times are in whole
  # seconds), so let 2 s pass before releasing it.
  for ((tries = 0; tries < 240; tries++)); do
    [[ $(job_field "$id" Restarts) -ge 1 && $(job_field "$id" JobState) == PENDING ]] && break
    [[ $(job_field "$id" JobState) == @(COMPLETED|FAILED|CANCELLED|TIMEOUT) ]] && break
    sleep 0.25
  done
  if [[ $(job_field "$id" Restarts) -ge 1 ]]; then
    pass "$name: signalled ($how), the job was requeued"
    sleep 2
    scontrol update JobId="$id" StartTime=now
  else
    fail "$name: not requeued after the signal ($how; job $(job_field "$id" JobState))"
    show_log "$name"
    return
  fi
  expect_completed "$name" "$id" || return 0
  local restarts
  restarts=$(job_field "$id" Restarts)
  [[ $restarts == 1 ]] || fail "$name: $restarts restarts, expected 1"
  if [[ $(grep -c "$first_end" "$WORK/$name.out") -eq 1 &&
    $(grep -c "$requeued.*; requeueing" "$WORK/$name.out") -eq 1 &&
    $(count_lines "$name" "launcher exited with 0") -eq 1 ]]; then
    pass "$name: first run ended ('$first_end') and was requeued, second run exited 0"
  else
    fail "$name: the log does not show '$first_end', '$requeued', then exit 0"
    show_log "$name"
  fi
  # Without this, a run that started over would pass the accuracy check too.
  local resumed
  resumed=$(grep -m1 -o "^# resume: .*ckpt-step-[0-9]\{9\}\.mddp" "$WORK/$name.out" || true)
  if [[ -n $resumed ]]; then pass "$name: the second run resumed (${resumed#\# resume: })"; else
    fail "$name: no '# resume: ...ckpt-step-N.mddp' line: the second run did not resume"
  fi
  # Only rank 0 (on node1; the other node sees the folder read-only) wrote, and only complete,
  # correctly named checkpoints with their manifests are left.
  local rank0_host stray
  rank0_host=$(awk '/^# layout:/ {rows = 1} rows && /^# +0 / {print $3; exit}' "$WORK/$name.out")
  stray=$(find "$ckpt_dir" -mindepth 1 -regextype posix-extended \
    ! -regex '.*/ckpt-step-[0-9]{9}\.(mddp|json)' | sed -n '1,3p')
  if [[ $rank0_host == node1 && -z $stray ]] &&
    compgen -G "$ckpt_dir/ckpt-step-*.json" >/dev/null; then
    pass "$name: only rank 0 (node1) wrote checkpoints: $(find "$ckpt_dir" -mindepth 1 \
      -printf '%f\n' | sort | paste -sd' ')"
  else
    fail "$name: rank 0 on '$rank0_host' (expected node1); unexpected files: ${stray:-none}"
  fi
}

# cancel NAME SBATCH_OPTION... -- PROGRAM_ARG...: a plain scancel (SIGTERM) while training: the
# program still checkpoints and exits 6, but the job must end CANCELLED, not be requeued.
cancel() {
  local name=$1 id tries
  shift
  id=$(submit "$name" "$@")
  for ((tries = 0; tries < 1200; tries++)); do
    compgen -G "$WORK/ckpt/$name/ckpt-step-*.mddp" >/dev/null && break
    [[ $(job_field "$id" JobState) == @(PENDING|RUNNING|CONFIGURING) ]] || break
    sleep 0.1
  done
  scancel "$id"
  # COMPLETING until the script has ended, so a requeue by the script would show by then.
  wait_state "$id" 60 CANCELLED PENDING COMPLETED FAILED || true
  if [[ $(job_field "$id" JobState) == CANCELLED && $(job_field "$id" Restarts) == 0 &&
    $(count_lines "$name" "not requeueing a job that Slurm is ending") -eq 1 ]]; then
    pass "$name: plain scancel: checkpoint written, job stays cancelled (not requeued)"
  else
    fail "$name: after a plain scancel the job is $(job_field "$id" JobState)" \
      "with $(job_field "$id" Restarts) restart(s); expected CANCELLED, not requeued"
    show_log "$name"
  fi
}

# watch_line NAME TEXT: in the background, polls the log of job NAME every 0.05 s (for up to
# 60 s) and, once it holds TEXT, writes the time (seconds since the epoch) to $WORK/NAME.seen, so
# that the time is within a poll of the line's appearance. Start it right after the submission
# and `wait` for it ($!).
watch_line() {
  local name=$1 text=$2 tries
  for ((tries = 0; tries < 1200; tries++)); do
    if grep -qF -- "$text" "$WORK/$name.out" 2>/dev/null; then
      date +%s.%N >"$WORK/$name.seen"
      break
    fi
    sleep 0.05
  done &
}

# expect_failed_fast NAME ID SINCE TEXT: the job ended FAILED, not requeued, less than FAST_END
# seconds after SINCE (seconds since the epoch: when the rank failed), so the surviving ranks did
# not wait for --comm-timeout; and its log holds TEXT, which names the rank and its host.
# Far below the default --comm-timeout (300 s), far above srun's --wait (10 s) on 2 busy cores.
readonly FAST_END=60
expect_failed_fast() {
  local name=$1 id=$2 since=$3 text=$4 state seconds
  if ! wait_state "$id" 60 "${ENDED[@]}"; then
    fail "$name: job $id still $(job_field "$id" JobState) after 60 s"
    show_log "$name"
    scancel "$id"
    return
  fi
  state=$(job_field "$id" JobState)
  seconds=$(awk -v end="$(date -d "$(job_field "$id" EndTime)" +%s)" -v since="$since" \
    'BEGIN {printf "%.1f", end - since}')
  if [[ $state == FAILED && $(job_field "$id" Restarts) == 0 ]] &&
    awk -v seconds="$seconds" -v limit="$FAST_END" 'BEGIN {exit !(seconds < limit)}'; then
    pass "$name: the job failed (exit $(job_field "$id" ExitCode)) $seconds s after the rank did"
  else
    fail "$name: job ended $state (exit $(job_field "$id" ExitCode)) $seconds s after the rank" \
      "failed (expected FAILED in under $FAST_END s)"
    show_log "$name"
  fi
  if grep -qF -- "$text" "$WORK/$name.out"; then pass "$name: the log says: $text"; else
    fail "$name: the log lacks: $text"
    show_log "$name"
  fi
}

# fault_job NAME KIND SBATCH_OPTION... -- PROGRAM_ARG...: submits a job whose rank 1 fails
# (MNIST_DDP_FAULT, KIND) after step 5; prints the job id.
fault_job() {
  local name=$1 kind=$2
  shift 2
  MNIST_DDP_MAX_FAILURE_REQUEUES=0 MNIST_DDP_FAULT="rank=1,step=5,kind=$kind" \
    submit "$name" "$@"
}

# rank_pid ID RANK: the process id of rank RANK of job ID, on whichever node it runs (the nodes
# share this machine's process table), once it has started; empty after 30 s.
rank_pid() {
  local tries pid
  for ((tries = 0; tries < 300; tries++)); do
    for pid in $(pgrep -x mnist_ddp); do
      if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
        grep -qxF -e "SLURM_JOB_ID=$1" && tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
        grep -qxF "SLURM_PROCID=$2"; then
        echo "$pid"
        return
      fi
    done
    sleep 0.1
  done
}

# === the tests ===================================================================================

# Short runs, identical in every layout; one thread per rank so that results do not depend on
# the machine.
TRAIN=(--data-dir "$FASHION_DIR" --model linear --epochs 1 --max-steps 120 --threads 1)
# Long enough (a few seconds) that a signal sent when the first periodic checkpoint appears
# lands mid-training, mid-epoch; no dropout and no momentum, so a resumed run must end exactly
# where an uninterrupted one does.
PREEMPT_TRAIN=(--data-dir "$FASHION_DIR" --model mlp --epochs 1 --max-steps 400 --batch-size 32
  --threads 1 --checkpoint-every 50)
CHECKPOINTS=0
# (The whole help first: with pipefail, grep -q closing the pipe early would read as failure.)
HELP=$("$MNIST_DDP_BIN" --help 2>&1 || true)
if grep -q -- '--checkpoint-dir' <<<"$HELP"; then CHECKPOINTS=1; fi

cluster install # slurm-wlm and munge, when missing
note "references: plain mpirun on this host"
reference ref-2 2 "${TRAIN[@]}"
reference ref-4 4 "${TRAIN[@]}"
if ((CHECKPOINTS)); then
  reference ref-preempt 2 "${PREEMPT_TRAIN[@]}" --checkpoint-dir "$WORK/ref-ckpt" --resume never
fi

note "one node with two GPUs (fake: /dev/null), srun --mpi=pmix"
SLURMCI_GPUS=2 cluster up single
id=$(submit one-node --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 -- "${TRAIN[@]}" \
  --metrics-file "$WORK/one-node.jsonl")
# At the same time, the installed batch script (cmake --install), submitted without MNIST_DDP_BIN
# from a folder without build/mnist_ddp: it must run the mnist_ddp on PATH, the installed one.
PREFIX=$WORK/prefix
id_installed=
if [[ -n ${MNIST_DDP_BUILD_DIR:-} ]]; then
  cmake --install "$MNIST_DDP_BUILD_DIR" --prefix "$PREFIX" >/dev/null
  mkdir -p "$WORK/installed"
  id_installed=$(unset MNIST_DDP_BIN && PATH=$PREFIX/bin:$PATH SUBMIT_DIR=$WORK/installed \
    SUBMIT_SCRIPT=$PREFIX/share/mnist_ddp/mnist_ddp.sbatch submit installed --nodes=1 \
    --ntasks-per-node=2 --gpus-per-node=0 -- "${TRAIN[@]}")
fi
if expect_completed one-node "$id"; then
  expect_layout one-node 2 "1 node" "$(hostname)" "$(hostname)"
  expect_same_accuracy one-node "$WORK/one-node.jsonl" "$WORK/ref-2.jsonl" 2
  expect_same_blas one-node
  if [[ $(count_lines one-node "GPUs 0,1 on each node") -eq 1 ]]; then
    pass "one-node: the job was given its 2 GPUs (CUDA_VISIBLE_DEVICES=0,1)"
  else
    fail "one-node: the job was not given CUDA_VISIBLE_DEVICES=0,1"
  fi
fi

if [[ -n $id_installed ]] && expect_completed installed "$id_installed"; then
  if grep -q "^# slurm: srun .* $PREFIX/bin/mnist_ddp " "$WORK/installed.out"; then
    pass "installed: the installed batch script ran the installed mnist_ddp from PATH"
    expect_same_blas installed
  else
    fail "installed: the batch script did not run $PREFIX/bin/mnist_ddp"
    show_log installed
  fi
elif [[ -z $id_installed ]]; then
  echo "SKIP: the installed batch script: MNIST_DDP_BUILD_DIR is not set"
fi

note "two nodes, each in its own network namespace, no GPUs (--gpus-per-node=0)"
mkdir -p "$WORK/ckpt"
SLURMCI_GPUS=0 SLURMCI_RANK0_DIR=$WORK/ckpt cluster up netns 2
export MNIST_DDP_CHECKPOINT_ROOT=$WORK/ckpt
# The ground for "only rank 0 wrote checkpoints": node2 cannot write there, node1 can.
if ! cluster on node2 touch "$WORK/ckpt/probe" 2>/dev/null &&
  cluster on node1 touch "$WORK/ckpt/probe" && rm "$WORK/ckpt/probe"; then
  pass "harness: node2 sees the checkpoint folder read-only, node1 can write it"
else
  fail "harness: node2 can write the checkpoint folder, or node1 cannot"
fi
# Both at once: 1 rank per node with srun, 2 ranks per node with mpirun. The srun job also
# passes its ranks through a wrapper and extra srun options, as container set-ups do.
id_srun=$(MNIST_DDP_WRAPPER=/usr/bin/env MNIST_DDP_SRUN_ARGS=--distribution=block \
  submit two-nodes-srun --nodes=2 --ntasks-per-node=1 --gpus-per-node=0 -- \
  "${TRAIN[@]}" --metrics-file "$WORK/two-nodes-srun.jsonl")
id_mpirun=$(MNIST_DDP_LAUNCHER=mpirun submit two-nodes-mpirun --nodes=2 --ntasks-per-node=2 \
  --gpus-per-node=0 -- "${TRAIN[@]}" --metrics-file "$WORK/two-nodes-mpirun.jsonl")
if expect_completed two-nodes-srun "$id_srun"; then
  expect_layout two-nodes-srun 2 "2 nodes" node1 node2
  expect_same_accuracy two-nodes-srun "$WORK/two-nodes-srun.jsonl" "$WORK/ref-2.jsonl" 2
  expect_same_blas two-nodes-srun
  if grep -q "^# slurm: srun --mpi=pmix .* --distribution=block /usr/bin/env $MNIST_DDP_BIN " \
    "$WORK/two-nodes-srun.out"; then
    pass "two-nodes-srun: MNIST_DDP_SRUN_ARGS and MNIST_DDP_WRAPPER reached the srun command"
  else
    fail "two-nodes-srun: the srun command lacks MNIST_DDP_SRUN_ARGS or MNIST_DDP_WRAPPER"
  fi
fi
if expect_completed two-nodes-mpirun "$id_mpirun"; then
  expect_layout two-nodes-mpirun 4 "2 nodes" node1 node1 node2 node2
  expect_same_accuracy two-nodes-mpirun "$WORK/two-nodes-mpirun.jsonl" "$WORK/ref-4.jsonl" 4
fi

if ((CHECKPOINTS)); then
  note "preemption: USR1, checkpoint, exit 6, requeue, resume (srun; USR1 to the job steps)"
  preempt preempt-srun steps --nodes=2 --ntasks-per-node=1 --gpus-per-node=0 -- \
    "${PREEMPT_TRAIN[@]}" --metrics-file "$WORK/preempt-srun.jsonl"
  expect_same_accuracy preempt-srun "$WORK/preempt-srun.jsonl" "$WORK/ref-preempt.jsonl" 2
  note "a rank killed after the first checkpoint: requeued, resumed, the same result (srun)"
  preempt kill-requeue-srun kill --nodes=2 --ntasks-per-node=1 --gpus-per-node=0 -- \
    "${PREEMPT_TRAIN[@]}" --metrics-file "$WORK/kill-requeue-srun.jsonl"
  expect_same_accuracy kill-requeue-srun "$WORK/kill-requeue-srun.jsonl" \
    "$WORK/ref-preempt.jsonl" 2
  note "a bad option: the job fails once, not requeued"
  id=$(submit bad-option --nodes=1 --ntasks-per-node=2 --gpus-per-node=0 -- "${TRAIN[@]}" \
    --batch-size 0)
  if wait_state "$id" 60 "${ENDED[@]}" && [[ $(job_field "$id" JobState) == FAILED &&
    $(job_field "$id" Restarts) == 0 ]] &&
    [[ $(count_lines bad-option "not requeueing after exit 2") -eq 1 ]]; then
    pass "bad-option: FAILED with exit 2, not requeued"
  else
    fail "bad-option: job $(job_field "$id" JobState), $(job_field "$id" Restarts) restarts"
    show_log bad-option
  fi
  note "cancellation: plain scancel (srun)"
  cancel cancel-srun --nodes=2 --ntasks-per-node=1 --gpus-per-node=0 -- "${PREEMPT_TRAIN[@]}"
  note "preemption (mpirun; USR1 to the batch shell, as --signal=B:USR1@120 sends it)"
  MNIST_DDP_LAUNCHER=mpirun preempt preempt-mpirun batch --nodes=2 --ntasks-per-node=1 \
    --gpus-per-node=0 -- "${PREEMPT_TRAIN[@]}" --metrics-file "$WORK/preempt-mpirun.jsonl"
  expect_same_accuracy preempt-mpirun "$WORK/preempt-mpirun.jsonl" "$WORK/ref-preempt.jsonl" 2
else
  echo "SKIP: preemption checks: '$MNIST_DDP_BIN --help' does not mention --checkpoint-dir" \
    "(no checkpoint support in this build)"
fi

# With the default --comm-timeout (300 s): only srun's --wait (slurm/mnist_ddp.sbatch) can end
# these jobs in seconds. All at once, one task per node each. The rank that is killed from outside
# trains for minutes unless killed.
note "faults under srun: a rank that throws, exits, aborts, is killed, hangs (two nodes)"
FAULT_JOB=(--nodes=2 --ntasks-per-node=1 --gpus-per-node=0 --)
# Each fault job's line is watched from its submission on, all at once.
declare -A fault_ids
watchers=()
for kind in throw exit abort; do
  fault_ids[$kind]=$(fault_job "fault-$kind-srun" "$kind" "${FAULT_JOB[@]}" "${TRAIN[@]}")
  watch_line "fault-$kind-srun" "injected fault (MNIST_DDP_FAULT)"
  watchers+=($!)
done
# A hung rank is alive, so no launcher can tell: the watchdog ends the job after --comm-timeout.
fault_ids[hang]=$(fault_job fault-hang-srun hang "${FAULT_JOB[@]}" "${TRAIN[@]}" --comm-timeout 5)
watch_line fault-hang-srun "injected fault (MNIST_DDP_FAULT)"
watchers+=($!)
id_kill=$(MNIST_DDP_MAX_FAILURE_REQUEUES=0 submit kill-srun "${FAULT_JOB[@]}" --data-dir "$FASHION_DIR" --model mlp --epochs 20 \
  --threads 1)
pid=$(rank_pid "$id_kill" 1)
watch_line kill-srun "# progress: "
wait $!
if [[ -n $pid && -s $WORK/kill-srun.seen ]]; then
  kill -9 "$pid"
  expect_failed_fast kill-srun "$id_kill" "$(date +%s.%N)" "srun: error: node2: task 1: Killed"
else
  fail "kill-srun: rank 1 of job $id_kill never started training"
  scancel "$id_kill"
fi
wait "${watchers[@]}"
for kind in throw exit abort hang; do
  since=$(cat "$WORK/fault-$kind-srun.seen" 2>/dev/null || echo 0)
  expect_failed_fast "fault-$kind-srun" "${fault_ids[$kind]}" "$since" \
    "[rank 1@node2] injected fault (MNIST_DDP_FAULT): $kind after step 5"
done
if grep -qF "rank(s) 1@node2 not responding" "$WORK/fault-hang-srun.out"; then
  pass "fault-hang-srun: the watchdog named the stalled rank"
else
  fail "fault-hang-srun: no watchdog message naming rank 1"
fi

note "done"
if ((FAILURES)); then
  echo "$FAILURES check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
