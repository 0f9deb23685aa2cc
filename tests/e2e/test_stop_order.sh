#!/usr/bin/env bash
# A stop signal at 2 ranks: no rank reports the stop (after which it exits 6) before rank 0's
# checkpoint is durable, so that a launcher which ends the job when the first rank exits
# (srun --wait in slurm/mnist_ddp.sbatch) cannot cut the write short (Note [Every rank waits for
# the checkpoint]). Rank 0's fsync is made slow and logs when each sync ended
# (tests/e2e/slow_fsync.cpp, preloaded into rank 0 alone), and every line of output is stamped
# with the time it came out. A planted early report checks that the verdict can fail.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
: "${SLOW_FSYNC_LIB:?set SLOW_FSYNC_LIB to the slow_fsync library}"

# Thousands of small steps: the signal lands with most of the run ahead.
RUN=(--data-dir "$FASHION_DIR" --model mlp --epochs 3 --batch-size 8 --threads 1 --log-every 5
  --log-all-ranks --checkpoint-dir "$WORK/ck")

# stop_verdict OUT FSYNC_LOG FOLDER: prints whether rank 1's stop line in OUT (stamped) came
# after the stop-signal checkpoint in FOLDER was durable, and returns 1 if not. Durable: when the
# fsync of FOLDER that follows the fsync of the manifest's temporary file ended, as FSYNC_LOG
# (slow_fsync's) has it; write_file_atomically syncs the file, then the folder after the rename,
# and a checkpoint writes its data file, then its manifest.
stop_verdict() {
  local out=$1 log=$2 folder manifest rank1_stop durable=
  folder=$(realpath "$3") # as /proc/self/fd shows it
  manifest=$(grep -l '"reason": "stop-signal"' "$folder"/*.json 2>/dev/null | head -1 || true)
  rank1_stop=$(awk '/\[rank 1\] # stopped by a signal/ {print $1; exit}' "$out")
  if [[ -n $manifest ]]; then
    durable=$(awk -v temporary="$folder/.${manifest##*/}.tmp." -v folder="$folder" '
      {path = substr($0, length($1) + 2)}
      index(path, temporary) == 1 {manifest_synced = 1; next}
      manifest_synced && path == folder {print $1; exit}' "$log")
  fi
  if [[ -z $manifest || -z $rank1_stop || -z $durable ]]; then
    echo "no stop-signal manifest ('$manifest'), stop line of rank 1 ('$rank1_stop') or sync" \
      "of the folder after the manifest ('$durable')"
    return 1
  fi
  awk -v stop="$rank1_stop" -v durable="$durable" 'BEGIN {
    lead = stop - durable
    printf "rank 1 reported the stop %.3f s %s rank 0'\''s checkpoint was durable\n",
      lead < 0 ? -lead : lead, lead < 0 ? "before" : "after"
    exit lead < 0 }'
}

# Two app contexts, so that only rank 0 (the first) runs with the slow fsync: each checkpoint
# write syncs four times (file, folder, manifest, folder), 1 s each.
exec 3> >(stamp >"$WORK/out")
stamper=$!
mpirun --oversubscribe -np 1 -x LD_PRELOAD="$SLOW_FSYNC_LIB" -x SLOW_FSYNC_SECONDS=1 \
  -x SLOW_FSYNC_LOG="$WORK/fsync.log" "$MNIST_DDP_BIN" "${RUN[@]}" : \
  -np 1 "$MNIST_DDP_BIN" "${RUN[@]}" >&3 3>&- 2>"$WORK/err" &
launcher=$!
exec 3>&- # the launcher holds the only write end now: the stamper ends after its last line
usr1_once_logged "$launcher" "^[0-9.]* # progress: epoch 1 step 5/"
wait "$stamper"
expect_exit 6 "SIGUSR1 with a slow checkpoint write on rank 0"

if verdict=$(stop_verdict "$WORK/out" "$WORK/fsync.log" "$WORK/ck"); then pass "$verdict"; else
  fail "$verdict"
  for file in out err fsync.log; do
    tail -n 8 "$WORK/$file" 2>/dev/null | sed "s/^/  $file | /" >&2 || true
  done
fi

# Planted: rank 1 reports the stop 1.5 s after the manifest's mtime (which comes before its sync,
# its rename and the folder's sync), so a check against the mtime would pass it, but 0.5 s before
# the checkpoint was durable.
planted=$WORK/planted
mkdir -p "$planted/ck"
echo '{"reason": "stop-signal"}' >"$planted/ck/ckpt-step-000000005.json"
touch -d @1700000000 "$planted/ck/ckpt-step-000000005.json"
folder=$(realpath "$planted/ck")
cat >"$planted/fsync.log" <<LOG
1699999999.000000000 $folder/.ckpt-step-000000005.mddp.tmp.42.0
1700000000.000000000 $folder
1700000001.000000000 $folder/.ckpt-step-000000005.json.tmp.42.0
1700000002.000000000 $folder
LOG
stop="# stopped by a signal after step 5, checkpoint written; exit 6: resume with --resume auto"
printf '%s\n' "1700000001.500000 [rank 1] $stop" "1700000002.010000 $stop" >"$planted/out"
if verdict=$(stop_verdict "$planted/out" "$planted/fsync.log" "$planted/ck"); then
  fail "planted early report passed the verdict: $verdict"
else
  pass "planted early report, 1.5 s after the manifest's mtime, fails the verdict: $verdict"
fi
finish e2e_stop_order
