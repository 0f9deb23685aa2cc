#!/usr/bin/env bash
# tests/slurm/test_sbatch_script.sh — slurm/mnist_ddp.sbatch run by bash as Slurm would start it,
# with stubs of srun and scontrol on PATH instead of a cluster: a run that exits 6 in a RUNNING
# job is requeued; MNIST_DDP_MAX_REQUEUES stops requeueing; a lost rank (a status above 128) or
# exit 5 is requeued, counted in the job's Comment up to MNIST_DDP_MAX_FAILURE_REQUEUES, with the
# nodes Slurm marks down left out; exits 1, 2, 3, 4 and 8 are never requeued; a setting that is
# not a count is refused with exit 2 before srun runs.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
SBATCH_SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/slurm/mnist_ddp.sbatch

# Each stub appends its arguments to $WORK/calls; srun exits with $SRUN_EXIT.
mkdir -p "$WORK/bin" "$WORK/job"
cat >"$WORK/bin/srun" <<'STUB'
#!/usr/bin/env bash
echo "srun $*" >>"$WORK/calls"
exit "${SRUN_EXIT:-0}"
STUB
cat >"$WORK/bin/scontrol" <<'STUB'
#!/usr/bin/env bash
echo "scontrol $*" >>"$WORK/calls"
[[ $1 == show && $2 == job ]] &&
  echo "JobId=$SLURM_JOB_ID JobState=RUNNING Comment=${STUB_COMMENT:-(null)} Restarts=0"
[[ $1 == show && $2 == node ]] && printf '%b' "${STUB_NODES:-NodeName=node1 State=ALLOCATED\n}"
exit 0
STUB
touch "$WORK/mnist_ddp"
chmod +x "$WORK/bin/srun" "$WORK/bin/scontrol" "$WORK/mnist_ddp"

# run_job VAR=VALUE...: runs the script in the job folder with a job's environment; sets STATUS,
# and $WORK/out, $WORK/err and $WORK/calls hold what it printed and which stubs it called.
run_job() {
  rm -f "$WORK/calls"
  touch "$WORK/calls"
  STATUS=0
  (cd "$WORK/job" && env PATH="$WORK/bin:$PATH" WORK="$WORK" MNIST_DDP_BIN="$WORK/mnist_ddp" \
    SLURM_JOB_ID=7 SLURM_JOB_NAME=stub SLURM_NTASKS=2 SLURM_JOB_NUM_NODES=1 \
    SLURM_JOB_NODELIST=node1 "$@" bash "$SBATCH_SCRIPT" --epochs 1) \
    >"$WORK/out" 2>"$WORK/err" || STATUS=$?
}

# outcome: the exit code and the stubs called, for a failure's message.
outcome() { echo "exit $STATUS, calls: $(tr '\n' ';' <"$WORK/calls")"; }

run_job SRUN_EXIT=6
[[ $STATUS -eq 6 ]] && grep -qx "scontrol requeue 7" "$WORK/calls" &&
  pass "exit 6 in a running job: requeued, exit 6" ||
  fail "exit 6 in a running job: $(outcome)"

# A leading zero is decimal, not octal.
run_job SRUN_EXIT=6 SLURM_RESTART_COUNT=8 MNIST_DDP_MAX_REQUEUES=08
[[ $STATUS -eq 6 ]] && ! grep -q requeue "$WORK/calls" &&
  grep -q "not requeueing after 8 requeues" "$WORK/out" &&
  pass "MNIST_DDP_MAX_REQUEUES=08 after 8 restarts: not requeued" ||
  fail "MNIST_DDP_MAX_REQUEUES=08 after 8 restarts: $(outcome)"

for setting in MAX_REQUEUES MAX_FAILURE_REQUEUES; do
  for value in abc -1 2x 1.5; do
    run_job SRUN_EXIT=6 "MNIST_DDP_$setting=$value"
    [[ $STATUS -eq 2 && ! -s $WORK/calls ]] &&
      grep -qF "$setting must be a whole number (0 or more), not '$value'" "$WORK/err" &&
      pass "MNIST_DDP_$setting='$value' refused before srun" ||
      fail "MNIST_DDP_$setting='$value': $(outcome), stderr: $(head -c 300 "$WORK/err")"
  done
done

# A rank killed (srun: 128 + 9) or a collective that failed (5): the first failure requeue.
for code in 137 134 5; do
  run_job SRUN_EXIT=$code
  [[ $STATUS -eq $code ]] &&
    grep -qx "scontrol update JobId=7 Comment=mnist_ddp-failure-requeues:1" "$WORK/calls" &&
    grep -qx "scontrol requeue 7" "$WORK/calls" && ! grep -q ExcNodeList "$WORK/calls" &&
    grep -q "failure requeue 1 of 3, resuming from the last checkpoint; requeueing" "$WORK/out" &&
    pass "exit $code: requeued, failure requeue 1 of 3" || fail "exit $code: $(outcome)"
done
run_job SRUN_EXIT=137 STUB_COMMENT=mnist_ddp-failure-requeues:3
[[ $STATUS -eq 137 ]] && ! grep -q requeue "$WORK/calls" &&
  grep -q "not requeueing after 3 such requeues (MNIST_DDP_MAX_FAILURE_REQUEUES)" "$WORK/out" &&
  pass "after 3 failure requeues: not requeued" || fail "after 3 failure requeues: $(outcome)"
run_job SRUN_EXIT=137 SLURM_JOB_NODELIST='node[1-2]' \
  STUB_NODES='NodeName=node1 State=ALLOCATED\nNodeName=node2 State=DOWN+NOT_RESPONDING\n'
grep -qx "scontrol update JobId=7 ExcNodeList=node2" "$WORK/calls" &&
  grep -qx "scontrol requeue 7" "$WORK/calls" &&
  grep -q "leaving out node(s) node2: Slurm marks them down" "$WORK/out" &&
  pass "a node Slurm marks down is left out of the requeued job" ||
  fail "a node marked down: $(outcome)"
for code in 1 2 3 4 8; do
  run_job SRUN_EXIT=$code
  [[ $STATUS -eq $code ]] && ! grep -q 'requeue\|Comment' "$WORK/calls" &&
    grep -q "not requeueing after exit $code: a usage, data, checkpoint or program error" \
      "$WORK/out" && pass "exit $code: not requeued" || fail "exit $code: $(outcome)"
done
finish
