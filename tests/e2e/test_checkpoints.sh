#!/usr/bin/env bash
# Checkpoints end to end: preemption by signal and exact resume, fallback past a damaged
# checkpoint, every kind of bad checkpoint exits 4 without touching the folder, evaluation of a
# checkpoint, model export, file modes under the umask.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# The real MNIST (fetch_data.sh does nothing when the folder already holds it).
DATA=$MNIST_DDP_SOURCE_DIR/data/mnist
"$MNIST_DDP_SOURCE_DIR/scripts/fetch_data.sh" "$DATA" >/dev/null
# Small batches, many steps: the stop signal comes with most of the run still ahead even where
# steps are fast, and small steps keep the three runs short on CPUs.
CNN=(--data-dir "$DATA" --model cnn --epochs 1 --batch-size 8 --max-steps 200 --threads 1
  --log-every 5)

# summary_of FILE: the summary record's losses and accuracy, exactly as written.
summary_of() {
  python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).readlines()[-1]); print(s["event"], s["steps"], repr(s["test_loss"]), repr(s["test_accuracy"]), repr(s["train_loss"]))' "$1"
}

# folder_hash DIR: one hash over names and contents, to prove nothing was written.
folder_hash() { (cd "$1" && sha256sum -- * | sha256sum); }

# --- Preemption: SIGUSR1 to mpirun (Open MPI forwards it to every rank) -----------------------
run_mpi 2 "${CNN[@]}" --metrics-file "$WORK/uninterrupted.jsonl"
expect_exit 0 "uninterrupted cnn run"

# mpirun itself in the background (no `timeout` wrapper: the signal must reach mpirun; ctest's
# TIMEOUT bounds a hang).
mpirun -np 2 --oversubscribe "$MNIST_DDP_BIN" "${CNN[@]}" \
  --checkpoint-dir "$WORK/preempt" >"$WORK/out" 2>"$WORK/err" &
# Signal once step 5's progress line is out: training is under way (the handlers are installed
# before the first step) and 195 steps remain.
usr1_once_logged $! "^# progress: epoch 1 step 5/"
expect_exit 6 "SIGUSR1 during training"
expect_once out "# stopped by a signal after step" "the stop is reported"
stopped_at=$(sed -n 's/^# stopped by a signal after step \([0-9]*\).*/\1/p' "$WORK/out")
grep -q '"reason": "stop-signal"' "$WORK"/preempt/*.json || fail "no stop-signal checkpoint"

run_mpi 2 "${CNN[@]}" --checkpoint-dir "$WORK/preempt" --resume auto \
  --metrics-file "$WORK/resumed.jsonl"
expect_exit 0 "resume after the signal"
# From the stop's checkpoint, not the end of an epoch that the run reached after all.
stop_file=$WORK/preempt/ckpt-step-$(printf %09d "$stopped_at").mddp
expect_once out "# resume: $stop_file (step $stopped_at," \
  "the resume starts from the stop's checkpoint"
if [[ $(summary_of "$WORK/resumed.jsonl") == "$(summary_of "$WORK/uninterrupted.jsonl")" ]]; then
  pass "the resumed run ends exactly as the uninterrupted one"
else
  fail "resumed $(summary_of "$WORK/resumed.jsonl") != uninterrupted $(summary_of "$WORK/uninterrupted.jsonl")"
fi

# --- Several checkpoints; the newest damaged ----------------------------------------------------
LINEAR=(--data-dir "$DATA" --epochs 2 --checkpoint-every 200 --keep-last 3)
run_mpi 2 "${LINEAR[@]}" --checkpoint-dir "$WORK/ck" --metrics-file "$WORK/linear.jsonl"
expect_exit 0 "linear run with checkpoints every 200 steps"
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

# Well-formed files with one defect each, made by a rewriter written from the format's
# description; that it copies an untouched checkpoint byte for byte shows it adds no other.
REWRITE=(python3 "$(dirname "${BASH_SOURCE[0]}")/rewrite_checkpoint.py" "$newest")
"${REWRITE[@]}" "$WORK/copy.mddp"
if cmp -s "$newest" "$WORK/copy.mddp"; then pass "the rewriter copies a checkpoint unchanged"; else
  fail "the rewriter changes what it copies"
fi
"${REWRITE[@]}" "$WORK/no_weight.mddp" --drop model/fc.weight
check_bad_checkpoint "the checkpoint lacks 'model/fc.weight'" "$WORK/ck" \
  --resume "$WORK/no_weight.mddp"
check_bad_checkpoint "the checkpoint lacks 'model/fc.weight'" "$WORK/ck" --eval-only \
  --resume "$WORK/no_weight.mddp"
"${REWRITE[@]}" "$WORK/wide.mddp" --reshape model/fc.weight
check_bad_checkpoint \
  "'model/fc.weight' has shape [11, 784] in the checkpoint, [10, 784] in the model" "$WORK/ck" \
  --resume "$WORK/wide.mddp"
"${REWRITE[@]}" "$WORK/v2.mddp" --version 2
check_bad_checkpoint "written in checkpoint format version 2; this build reads versions up to 1" \
  "$WORK/ck" --resume "$WORK/v2.mddp"

"${REWRITE[@]}" "$WORK/extra.mddp" --add model/extra
check_bad_checkpoint "the checkpoint holds 'model/extra', which this run does not have" \
  "$WORK/ck" --resume "$WORK/extra.mddp"
# Crafted input: before depths were bounded, these crashed the reader (SIGSEGV).
"${REWRITE[@]}" "$WORK/deep.mddp" --nest 200000
check_bad_checkpoint "malformed header: nested deeper than 16 levels" "$WORK/ck" \
  --resume "$WORK/deep.mddp"
cp -r "$WORK/ck" "$WORK/deep_manifest"
python3 -c 'import sys; open(sys.argv[1], "w").write("{\"bytes\": " + "[" * 200000 + "]" * 200000 + "}")' \
  "$WORK/deep_manifest/ckpt-step-999999999.json"
run_mpi 2 "${LINEAR[@]}" --checkpoint-dir "$WORK/deep_manifest" --resume auto --max-steps 1
expect_exit 0 "resume auto past a manifest nested 200,000 deep"
expect_once err "malformed manifest: nested deeper than 16 levels" "the deep manifest is reported"
# Read only once known to be a regular file of bounded size: /dev/zero would fill the memory.
ln -s /dev/zero "$WORK/zero.mddp"
check_bad_checkpoint "checkpoint '$WORK/zero.mddp' is not a regular file" "$WORK/ck" \
  --resume "$WORK/zero.mddp"

# --- A folder holds one run: another run's checkpoints are neither pruned nor resumed --------
ONE=(--data-dir "$DATA" --threads 1 --checkpoint-dir "$WORK/one")
run_mpi 2 "${ONE[@]}" --max-steps 10 --checkpoint-every 10
expect_exit 0 "another run's checkpoint at step 10"
before=$(folder_hash "$WORK/one")
run_mpi 2 "${ONE[@]}" --max-steps 5 --checkpoint-every 5 --keep-last 1
expect_exit 2 "a fresh run into a folder of another run's checkpoints"
expect_once err "--checkpoint-dir '$WORK/one' holds checkpoints of an earlier run" \
  "the refusal names the folder"
expect_once err "pass --replace-checkpoints" "the refusal names the option"
[[ $(folder_hash "$WORK/one") == "$before" ]] || fail "the refused run changed the folder"
run_mpi 2 "${ONE[@]}" --max-steps 5 --checkpoint-every 5 --keep-last 1 --replace-checkpoints
expect_exit 0 "--replace-checkpoints"
expect_once out "(every-n-steps) step 5 -> $WORK/one/ckpt-step-000000005.mddp" \
  "the run's checkpoint is logged"
if [[ $(ls "$WORK/one") == "$(printf 'ckpt-step-000000005.json\nckpt-step-000000005.mddp')" ]]; then
  pass "the run keeps its own checkpoint and replaces the other run's"
else
  fail "after --replace-checkpoints the folder holds: $(ls "$WORK/one")"
fi
run_mpi 2 "${ONE[@]}" --max-steps 6 --resume auto
expect_exit 0 "resume auto after --replace-checkpoints"
expect_once out "# resume: $WORK/one/ckpt-step-000000005.mddp (step 5," "it resumes the run's own"

# --- File modes: the umask decides, as for any standard tool ----------------------------------
for mask in 022 077; do
  want=644
  [[ $mask == 077 ]] && want=600
  dir=$WORK/umask$mask
  mkdir -p "$dir/tb"
  saved_mask=$(umask)
  umask "$mask"
  run_mpi 2 --data-dir "$DATA" --max-steps 20 --checkpoint-dir "$dir/ck" \
    --metrics-file "$dir/metrics.jsonl" --export-model "$dir/model.pt" --timeline "$dir/t.json" \
    --report "$dir/report.html" --tensorboard-dir "$dir/tb"
  umask "$saved_mask"
  expect_exit 0 "every output under umask $mask"
  # A checkpoint and its manifest, the metrics, model, timeline, report and TensorBoard files.
  files=$(find "$dir" -type f | wc -l)
  wrong=$(find "$dir" -type f ! -perm "$want" -printf '%m %p\n')
  if [[ $files -eq 7 && -z $wrong ]]; then pass "umask $mask: all $files files have mode $want"; else
    fail "umask $mask: $files files, expected mode $want for each; differing: $wrong"
  fi
done

# --- Export for inference -----------------------------------------------------------------------
run_mpi 2 --data-dir "$DATA" --epochs 1 --export-model "$WORK/model.pt"
expect_exit 0 "--export-model"
[[ -s $WORK/model.pt ]] || fail "--export-model wrote nothing"
finish
