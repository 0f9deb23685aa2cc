#!/usr/bin/env bash
# A checkpoint written to a full file system: the run ends (exit 1) with a message naming the
# folder and "No space left on device", the previous checkpoints stay as they were, no temporary
# file is left, and --resume auto continues from the newest intact one. Twice: full before the
# checkpoint file (2 ranks), and full between the checkpoint file and its manifest. The file
# system is a 6 MiB tmpfs the test mounts (root); without mount permission the test is skipped
# (77), which CI counts as a failure.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

DISK=$WORK/disk
mount_tmpfs "$DISK" 6m

write_dataset "$WORK/data" 256 64
CKPT=$DISK/ck
# 8 steps per epoch; a checkpoint every 2 steps (about 37 KB each: the linear model).
RUN=(--data-dir "$WORK/data" --epochs 1 --batch-size 32 --threads 1 --checkpoint-dir "$CKPT"
  --checkpoint-every 2)

# hashes: name and SHA-256 of every file of the checkpoint folder, hidden ones too, to prove
# that nothing changed.
hashes() {
  (cd "$CKPT" && find . -mindepth 1 -maxdepth 1 -printf '%f\0' | sort -z | xargs -0 -r sha256sum --)
}

# fill_disk FREE_BYTES: fills the tmpfs with a file, then gives back FREE_BYTES of it.
fill_disk() {
  dd if=/dev/zero of="$DISK/filler" bs=64k status=none 2>/dev/null || true
  local size
  size=$(stat -c %s "$DISK/filler")
  truncate -s $((size - $1)) "$DISK/filler"
}

# expect_disk_full_failure WHAT: the run failed on the full disk, said so once, naming the folder,
# and left no temporary file.
expect_disk_full_failure() {
  expect_exit 1 "$1"
  expect_once err "No space left on device" "$1: the reason is given"
  expect_once err "'$CKPT/" "$1: the checkpoint folder is named"
  local leftovers
  leftovers=$(find "$CKPT" -name '*.tmp.*')
  if [[ -z $leftovers ]]; then pass "$1: no temporary file left"; else
    fail "$1: temporary files left: $leftovers"
  fi
}

run_mpi 1 "${RUN[@]}" --max-steps 4
expect_exit 0 "first run, checkpoints at steps 2 and 4"
before=$(hashes)
checkpoint_bytes=$(stat -c %s "$CKPT/ckpt-step-000000004.mddp")

# --- Full before the checkpoint file: its first write fails ---------------------------------------
# At 2 ranks (resuming the 1-rank run's checkpoint): the failed write is agreed, so both ranks
# exit 1 and only rank 0 reports it.
fill_disk 0
run_mpi 2 "${RUN[@]}" --max-steps 8 --resume auto
expect_disk_full_failure "disk full at the checkpoint (2 ranks)"
if [[ $(hashes) == "$before" ]]; then pass "disk full at the checkpoint: the folder is unchanged"
else fail "disk full at the checkpoint: the checkpoint folder changed"; fi

# --- Room for the checkpoint file (whole 4 KiB pages), none for its manifest ----------------------
rm "$DISK/filler"
fill_disk $(((checkpoint_bytes + 4095) / 4096 * 4096))
run_mpi 1 "${RUN[@]}" --max-steps 8 --resume auto
expect_disk_full_failure "disk full at the manifest"
# Step 6's checkpoint file goes with the failed manifest (pruning goes by manifests and would
# never remove it); steps 2 and 4 are untouched.
if [[ $(hashes) == "$before" ]]
then pass "disk full at the manifest: the folder is as before, step 6's file removed"
else fail "disk full at the manifest: the folder changed: $(ls "$CKPT")"; fi

# --- Space again: the run resumes from the newest intact checkpoint and finishes ---------------
rm "$DISK/filler"
run_mpi 1 "${RUN[@]}" --max-steps 8 --resume auto
expect_exit 0 "resume once there is space"
expect_once out "# resume: $CKPT/ckpt-step-000000004.mddp (step 4," \
  "the resume starts from the last checkpoint written before the disk filled"
if [[ -e $CKPT/ckpt-step-000000008.json ]]; then pass "the resumed run writes its checkpoints"
else fail "no checkpoint at step 8 after the resume"; fi

finish e2e_disk_full
