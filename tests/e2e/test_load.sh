#!/usr/bin/env bash
# End to end, under load: 8 ranks oversubscribed on this machine's cores train to the same
# result as the global batch needs, and a soak of SOAK_RUNS (default 25) consecutive short runs
# with 2, 3 and 4 ranks ends every one with exit 0, leaving no process, no shared-memory segment
# and no file behind but the outputs asked for.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# The runs' shared-memory transport keeps its segments in a folder of its own, so that the
# segments of jobs that other tests run meanwhile are not counted as left behind.
SHM_DIR=$(mktemp -d /dev/shm/mnist_ddp_load.XXXXXX)
trap 'rm -rf "$WORK" "$SHM_DIR"' EXIT
export OMPI_MCA_btl_vader_backing_directory=$SHM_DIR
shm_segments() {
  find /dev/shm -mindepth 1 -maxdepth 1 ! -name 'vader_segment.*' ! -path "$SHM_DIR" \
    -printf '%f\n' | sort
}
shm_before=$(shm_segments)

# --- 8 ranks on 2 cores: 8 x 8 images per step = the tutorial's global batch of 64 -----------
run_mpi 8 --data-dir "$FASHION_DIR" --epochs 1 --batch-size 8 --threads 1 \
  --metrics-file "$WORK/eight.jsonl" --min-accuracy 0.78
expect_exit 0 "8 oversubscribed ranks reach 78% on Fashion-MNIST in one epoch"
expect_once out "# layout: 8 ranks on 1 node" "all 8 ranks are listed"
python3 - "$WORK/eight.jsonl" <<'PY' || fail "8-rank metrics"
import json, sys
summary = [json.loads(line) for line in open(sys.argv[1])][-1]
assert summary["event"] == "summary" and summary["world_size"] == 8, summary
assert summary["steps"] == 938, summary  # 60000 / (8 ranks x 8) rounded up
print(f"ok: 8 ranks: 938 steps, test accuracy {summary['test_accuracy']:.4f}")
PY

# --- Soak -------------------------------------------------------------------------------------
RUNS=${SOAK_RUNS:-25}
write_dataset "$WORK/tiny" 512 128
failed=0
for ((i = 1; i <= RUNS; i++)); do
  ranks=$((2 + i % 3))
  rm -rf "$WORK/soak"
  mkdir "$WORK/soak"
  run_mpi "$ranks" --data-dir "$WORK/tiny" --epochs 2 --batch-size 16 --threads 1 \
    --checkpoint-dir "$WORK/soak/ckpt" --keep-last 1 --metrics-file "$WORK/soak/m.jsonl"
  if [[ $STATUS -ne 0 ]]; then
    failed=$((failed + 1))
    fail "soak run $i ($ranks ranks): exit $STATUS: $(tail -3 "$WORK/err")"
    continue
  fi
  # Exactly the outputs asked for: the metrics file, one checkpoint and its manifest.
  files=$(cd "$WORK/soak" && find . -type f | sort | tr '\n' ' ')
  [[ $files == "./ckpt/ckpt-step-"*".json ./ckpt/ckpt-step-"*".mddp ./m.jsonl " ]] ||
    fail "soak run $i: unexpected files: $files"
done
((failed == 0)) && pass "$RUNS consecutive runs with 2-4 ranks, every one exit 0"
expect_no_process_left "the 8 ranks and the soak"
# Only what appeared counts: an older job's segment that Open MPI cleaned up meanwhile is none of
# these runs' doing.
new_shm=$(comm -13 <(echo "$shm_before") <(shm_segments); ls -A "$SHM_DIR")
[[ -z $new_shm ]] && pass "no shared-memory segment left behind" ||
  fail "new in /dev/shm: $(head -5 <<<"$new_shm")"

finish
