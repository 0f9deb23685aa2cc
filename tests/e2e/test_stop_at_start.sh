#!/usr/bin/env bash
# A stop signal during the start-up: the handler is in place from the start of main (a rank's
# SigCgt in /proc has SIGTERM while MPI, the options and the data are still being set up), and
# SIGTERM to a rank then ends every rank with exit 6 and one message before the first step,
# training and writing nothing (no metrics file, no checkpoint).
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

METRICS=$WORK/metrics.jsonl
timeout 120 mpirun -np 2 --oversubscribe "$MNIST_DDP_BIN" --data-dir "$FASHION_DIR" \
  --model linear --epochs 1 --threads 1 --metrics-file "$METRICS" \
  --checkpoint-dir "$WORK/ck" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
# handles_term PID: the process catches SIGTERM (bit 15 of its SigCgt mask).
handles_term() {
  local mask
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $mask ]] && (((16#$mask >> 14) & 1))
}
rank=""
for _ in $(seq 300); do
  for pid in $(pgrep -f -- "$METRICS" || true); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == mnist_ddp ]] && handles_term "$pid" && rank=$pid
  done
  [[ -z $rank ]] || break
  sleep 0.01
done
[[ -n $rank ]] && kill -TERM "$rank"
STATUS=0
wait "$launcher" || STATUS=$?
expect_exit 6 "SIGTERM to a rank during its start-up"
if grep -q "stopped by a signal before the first step: nothing was trained or written" \
     "$WORK/err"; then
  pass "stopped before the first step, saying so"
else
  fail "no message saying it stopped before the first step: $(grep -m2 -e error -e signal \
    "$WORK/err" "$WORK/out")"
fi
[[ ! -e $METRICS && ! -e $WORK/ck/ckpt-step-000000001.mddp ]] && pass "nothing written" ||
  fail "a metrics file or a checkpoint was written"
[[ $(grep -c 'error' "$WORK/err") -le 1 ]] || fail "more than one error message"
expect_no_process_left "the stopped ranks"

finish e2e_stop_at_start
