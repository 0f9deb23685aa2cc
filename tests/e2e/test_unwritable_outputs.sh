#!/usr/bin/env bash
# Outputs that cannot be written are found at start: on a read-only mount, an existing
# --checkpoint-dir and each output file's folder (--metrics-file, --report, --timeline,
# --export-model, --tensorboard-dir) end 2 ranks with exit 2 before the first step, the message
# naming the path and the OS error; --eval-only still reads the checkpoints there. A write that
# fails later (--metrics-file /dev/full) names the file and the OS error. The file system is a
# tmpfs the test mounts and makes read-only (root); without mount permission the test is skipped
# (77), which CI counts as a failure.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

RO=$WORK/ro
mount_tmpfs "$RO" 16m

write_dataset "$WORK/data" 256 64
RUN=(--data-dir "$WORK/data" --epochs 1 --batch-size 32 --threads 1 --progress lines
  --log-every 1)
run_mpi 2 "${RUN[@]}" --max-steps 2 --checkpoint-every 2 --checkpoint-dir "$RO/ck"
expect_exit 0 "a checkpoint written before the mount turns read-only"
mount -o remount,ro "$RO"

# refused NAME PATH OPTION...: 2 ranks exit 2 before a step, naming PATH and the OS error.
refused() {
  local name=$1 path=$2
  shift 2
  run_mpi 2 "${RUN[@]}" "$@"
  expect_exit 2 "$name"
  if grep -q "'$path'.*Read-only file system" "$WORK/err"; then
    pass "$name: the message names '$path' and the OS error"
  else
    fail "$name: no message naming '$path' and 'Read-only file system':"
    sed 's/^/  | /' "$WORK/err" | head -5 >&2
  fi
  ! grep -q '^# progress: epoch' "$WORK/out" || fail "$name: it trained before failing"
}
refused "an existing checkpoint folder" "$RO/ck" --checkpoint-dir "$RO/ck" --resume auto
refused "--metrics-file" "$RO/metrics.jsonl" --metrics-file "$RO/metrics.jsonl"
refused "--report" "$RO/report.html" --report "$RO/report.html"
refused "--timeline" "$RO/trace.json" --timeline "$RO/trace.json"
refused "--export-model" "$RO/model.pt" --export-model "$RO/model.pt"
refused "--tensorboard-dir" "$RO/tb" --tensorboard-dir "$RO/tb"

run_mpi 2 "${RUN[@]}" --checkpoint-dir "$RO/ck" --resume auto --eval-only
expect_exit 0 "--eval-only reads a read-only checkpoint folder"

run_mpi 1 "${RUN[@]}" --max-steps 2 --metrics-file /dev/full
expect_exit 1 "a metrics file that cannot take a record"
grep -q "writing --metrics-file '/dev/full' failed: No space left on device" "$WORK/err" &&
  pass "the failed write names the file and the OS error" ||
  fail "no message naming /dev/full and the OS error: $(grep -m1 error "$WORK/err")"

finish e2e_unwritable_outputs
