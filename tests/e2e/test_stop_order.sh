#!/usr/bin/env bash
# A stop signal at 2 ranks: no rank reports the stop (after which it exits 6) before rank 0's
# checkpoint is durable, so that a launcher which ends the job when the first rank exits
# (srun --wait in slurm/mnist_ddp.sbatch) cannot cut the write short (Note [Every rank waits for
# the checkpoint]). Rank 0's fsync is made slow (tests/e2e/slow_fsync.cpp, preloaded into rank 0
# alone) and every line of output is stamped with the time it came out.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
: "${SLOW_FSYNC_LIB:?set SLOW_FSYNC_LIB to the slow_fsync library}"

# Thousands of small steps: the signal lands with most of the run ahead.
RUN=(--data-dir "$FASHION_DIR" --model mlp --epochs 3 --batch-size 8 --threads 1 --log-every 5
  --log-all-ranks --checkpoint-dir "$WORK/ck")

# stamp: each line of stdin, after the time it was read (seconds since the epoch).
stamp() {
  local line
  while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done
}

# Two app contexts, so that only rank 0 (the first) runs with the slow fsync: each checkpoint
# write syncs four times (file, folder, manifest, folder), 1 s each.
mpirun --oversubscribe -np 1 -x LD_PRELOAD="$SLOW_FSYNC_LIB" -x SLOW_FSYNC_SECONDS=1 \
  "$MNIST_DDP_BIN" "${RUN[@]}" : -np 1 "$MNIST_DDP_BIN" "${RUN[@]}" \
  > >(stamp >"$WORK/out") 2>"$WORK/err" &
usr1_once_logged $! "^[0-9.]* # progress: epoch 1 step 5/"
sleep 0.5 # the last stamped lines
expect_exit 6 "SIGUSR1 with a slow checkpoint write on rank 0"

manifest=$(grep -l '"reason": "stop-signal"' "$WORK"/ck/*.json 2>/dev/null | head -1 || true)
rank1_stop=$(awk '/\[rank 1\] # stopped by a signal/ {print $1; exit}' "$WORK/out")
if [[ -z $manifest || -z $rank1_stop ]]; then
  fail "no stop-signal manifest ('$manifest') or no stop line of rank 1 ('$rank1_stop')"
  sed 's/^/  | /' "$WORK/out" "$WORK/err" | tail -20 >&2
else
  written=$(stat -c %.9Y "$manifest")
  lead=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" \
    "$rank1_stop" "$written")
  if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0 else 1)" "$lead"; then
    pass "rank 1 reported the stop $lead s after rank 0's manifest was written"
  else
    fail "rank 1 reported the stop ${lead#-} s before rank 0's manifest was written"
  fi
fi
finish e2e_stop_order
