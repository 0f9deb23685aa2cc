#!/usr/bin/env bash
# A training loss that is not finite (--lr 1e30 on the mlp) ends the run on every rank with exit 8
# and one message, from the lowest rank that saw it, naming the step and the value, before a checkpoint of those weights: the
# newest checkpoint is step 1's, intact, and --resume auto from it stops the same way at step 2.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

CKPT=$WORK/ck
RUN=(--data-dir "$FASHION_DIR" --model mlp --epochs 1 --threads 1 --checkpoint-dir "$CKPT"
  --checkpoint-every 1 --max-steps 20 --metrics-file "$WORK/metrics.jsonl")
run_mpi 2 "${RUN[@]}" --lr 1e30
expect_exit 8 "a loss that is not finite"
errors=$(grep -c 'error' "$WORK/err" || true)
if [[ $errors == 1 ]] &&
   grep -qE "^mnist_ddp: error: \[rank 0@[^]]+\] a training loss is not finite at step 2 \(-?nan on this rank\): training stopped there, and no checkpoint holds these weights" \
     "$WORK/err"; then
  pass "one message, naming the step and the value"
else
  fail "expected one error naming step 2 and nan, got: $(grep error "$WORK/err")"
fi
newest=$(find "$CKPT" -name 'ckpt-step-*.mddp' | sort | tail -1)
[[ $newest == */ckpt-step-000000001.mddp ]] && pass "the newest checkpoint is step 1's" ||
  fail "the newest checkpoint is '$newest', not step 1's"
! grep -q '"event":"summary"' "$WORK/metrics.jsonl" || fail "the metrics file has a summary"

run_mpi 2 "${RUN[@]}" --lr 1e30 --resume auto
expect_exit 8 "--resume auto from the newest checkpoint"
grep -q "# resume: .*(step 1," "$WORK/out" && pass "resumed at step 1" ||
  fail "the log does not say it resumed at step 1"
grep -q "a training loss is not finite at step 2 " "$WORK/err" && pass "stopped at step 2 again" ||
  fail "the resumed run did not stop at step 2: $(grep error "$WORK/err")"

finish e2e_not_finite
