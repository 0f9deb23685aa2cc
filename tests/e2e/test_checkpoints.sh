#!/usr/bin/env bash
# Checkpoints end to end: preemption by signal and exact resume, fallback past a damaged
# checkpoint, every kind of bad checkpoint exits 4 without touching the folder, evaluation of a
# checkpoint, model export.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

DATA=$MNIST_DDP_SOURCE_DIR/data/mnist
[[ -f $DATA/train-images-idx3-ubyte ]] || "$MNIST_DDP_SOURCE_DIR/scripts/fetch_data.sh" "$DATA"
CNN=(--data-dir "$DATA" --model cnn --epochs 1 --max-steps 40 --threads 1)

# summary_of FILE: the summary record's losses and accuracy, exactly as written.
summary_of() {
  python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).readlines()[-1]); print(s["event"], s["steps"], repr(s["test_loss"]), repr(s["test_accuracy"]), repr(s["train_loss"]))' "$1"
}

# folder_hash DIR: one hash over names and contents, to prove nothing was written.
folder_hash() { (cd "$1" && sha256sum -- * | sha256sum); }

# --- Preemption: SIGUSR1 to mpirun (Open MPI forwards it to every rank) -----------------------
run_mpi 2 "${CNN[@]}" --metrics-file "$WORK/uninterrupted.jsonl"
expect_exit 0 "uninterrupted cnn run"

STATUS=0
# mpirun itself in the background (no `timeout` wrapper: the signal must reach mpirun; ctest's
# TIMEOUT bounds a hang).
mpirun -np 2 --oversubscribe "$MNIST_DDP_BIN" "${CNN[@]}" \
  --checkpoint-dir "$WORK/preempt" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
# The header follows the signal handlers' installation: from then on USR1 means "stop".
for _ in $(seq 600); do grep -q "^# epoch" "$WORK/out" 2>/dev/null && break; sleep 0.05; done
sleep 1
kill -USR1 "$launcher"
wait "$launcher" || STATUS=$?
expect_exit 6 "SIGUSR1 during training"
expect_once out "# stopped by a signal after step" "the stop is reported"
grep -q '"reason": "stop-signal"' "$WORK"/preempt/*.json || fail "no stop-signal checkpoint"
[[ $(stat -c %a "$WORK"/preempt/*.mddp) == 644 ]] || fail "checkpoint mode is not 0644"

run_mpi 2 "${CNN[@]}" --checkpoint-dir "$WORK/preempt" --resume auto \
  --metrics-file "$WORK/resumed.jsonl"
expect_exit 0 "resume after the signal"
expect_once out "# resume: $WORK/preempt/ckpt-step-" "the resume names its checkpoint"
if [[ $(summary_of "$WORK/resumed.jsonl") == "$(summary_of "$WORK/uninterrupted.jsonl")" ]]; then
  pass "the resumed run ends exactly as the uninterrupted one"
else
  fail "resumed $(summary_of "$WORK/resumed.jsonl") != uninterrupted $(summary_of "$WORK/uninterrupted.jsonl")"
fi

# --- Several checkpoints; the newest damaged ----------------------------------------------------
LINEAR=(--data-dir "$DATA" --epochs 2 --checkpoint-every 20 --keep-last 3)
run_mpi 2 "${LINEAR[@]}" --checkpoint-dir "$WORK/ck" --metrics-file "$WORK/linear.jsonl"
expect_exit 0 "linear run with checkpoints every 20 steps"
[[ $(find "$WORK/ck" -name '*.mddp' | wc -l) -eq 3 ]] || fail "--keep-last 3 kept $(ls "$WORK/ck")"
newest=$(find "$WORK/ck" -name '*.mddp' | sort | tail -1)
previous=$(find "$WORK/ck" -name '*.mddp' | sort | tail -2 | head -1)

run_mpi 2 "${LINEAR[@]}" --eval-only --resume "$newest"
expect_exit 0 "--eval-only on the final checkpoint"
final=$(python3 -c 'import json,sys; print("%.2f%%" % (100*json.loads(open(sys.argv[1]).readlines()[-1])["test_accuracy"]))' "$WORK/linear.jsonl")
expect_once out "# final test_acc $final" "--eval-only gives the training run's final accuracy"

cp -r "$WORK/ck" "$WORK/damaged"
truncate -s -100 "$WORK/damaged/$(basename "$newest")"
run_mpi 2 "${LINEAR[@]}" --checkpoint-dir "$WORK/damaged" --resume auto
expect_exit 0 "resume auto past a damaged newest checkpoint"
expect_once err "skipping damaged checkpoint" "the damaged one is reported"
expect_once out "# resume: $WORK/damaged/$(basename "$previous")" "the previous one is used"

# --- Bad checkpoints: exit 4 on every rank, folder untouched ------------------------------------
check_bad_checkpoint() {  # MESSAGE FOLDER ARGS...
  local message=$1 folder=$2 before
  shift 2
  before=$(folder_hash "$folder")
  run_mpi 2 "${LINEAR[@]}" --checkpoint-dir "$folder" "$@"
  expect_exit 4 "$message"
  expect_once err "$message" "$message"
  [[ $(folder_hash "$folder") == "$before" ]] || fail "$message: the folder was changed"
}

cp -r "$WORK/ck" "$WORK/all_damaged"
for f in "$WORK"/all_damaged/*.mddp; do printf 'x' | dd of="$f" bs=1 seek=100 conv=notrunc status=none; done
check_bad_checkpoint "none of the 3 checkpoints in '$WORK/all_damaged' is intact" \
  "$WORK/all_damaged" --resume auto

cp "$newest" "$WORK/truncated.mddp" && truncate -s 1000 "$WORK/truncated.mddp"
check_bad_checkpoint "checksum mismatch: the file is truncated or damaged" "$WORK/ck" \
  --resume "$WORK/truncated.mddp"
check_bad_checkpoint "not an mnist_ddp checkpoint" "$WORK/ck" \
  --resume "$DATA/train-labels-idx1-ubyte"
check_bad_checkpoint "does not exist" "$WORK/ck" --resume "$WORK/none.mddp"
check_bad_checkpoint '--model: checkpoint "linear", this run "mlp"' "$WORK/ck" \
  --resume "$newest" --model mlp
check_bad_checkpoint '--lr: checkpoint 0.01, this run 0.5' "$WORK/ck" --resume "$newest" --lr 0.5
check_bad_checkpoint "holds a 'linear' model, not 'cnn'" "$WORK/ck" --eval-only \
  --resume "$newest" --model cnn

# --- Export for inference -----------------------------------------------------------------------
run_mpi 2 --data-dir "$DATA" --epochs 1 --export-model "$WORK/model.pt"
expect_exit 0 "--export-model"
[[ -s $WORK/model.pt ]] || fail "--export-model wrote nothing"
finish
