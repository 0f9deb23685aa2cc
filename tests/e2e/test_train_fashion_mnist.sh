#!/usr/bin/env bash
# End to end: mpirun -np 2 on Fashion-MNIST (60k/10k), one epoch of the linear model, must reach
# 78% test accuracy; only rank 0 logs; the metrics file holds the documented records.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

[[ -f $FASHION_DIR/train-images-idx3-ubyte.gz ]] || {
  echo "Fashion-MNIST missing: apt-get install dataset-fashion-mnist" >&2
  exit 1
}

run_mpi 2 --data-dir "$FASHION_DIR" --epochs 1 --threads 1 --min-accuracy 0.78 \
  --metrics-file "$WORK/metrics.jsonl"
expect_exit 0 "one epoch on Fashion-MNIST reaches --min-accuracy 0.78"
expect_once out "# final test_acc" "only rank 0 prints the summary"
expect_once out "# layout: 2 ranks on 1 node" "rank 0 prints the layout"
[[ -s $WORK/err ]] && fail "stderr is not empty: $(head -3 "$WORK/err")"

python3 - "$WORK/metrics.jsonl" <<'PY' || fail "metrics file content"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert all(r["schema"] == 2 for r in records), records
assert [r["step"] for r in records if r["event"] == "step"] == [100, 200, 300, 400], records
records = [r for r in records if r["event"] != "step"]
assert [r["event"] for r in records] == ["epoch", "summary"], records
epoch, summary = records
for key in ["epoch", "step", "train_loss", "test_loss", "test_accuracy", "images_per_sec",
            "elapsed_s", "world_size"]:
    assert key in epoch, key
for key in ["test_loss", "test_accuracy", "train_loss", "steps", "train_images_per_sec",
            "wall_s", "world_size", "backend", "model"]:
    assert key in summary, key
assert epoch["epoch"] == 1 and epoch["step"] == 469, epoch     # ceil(30000 / 64) steps per rank
assert summary["world_size"] == 2 and summary["backend"] == "mpi" and summary["model"] == "linear"
assert (summary["device"], summary["mode"], summary["precision"]) == ("cpu", "ddp", "fp32"), summary
assert summary["test_accuracy"] >= 0.78, summary
# Full precision: the accuracy read back is exactly correct / count as a double.
assert epoch["test_accuracy"] == epoch["test_correct"] / epoch["test_count"], epoch
assert epoch["test_count"] == 10000
print("ok: metrics file has an epoch and a summary record with full-precision values")
PY

# --max-steps ends mid-epoch, still evaluates and summarises.
run_mpi 2 --data-dir "$FASHION_DIR" --epochs 3 --max-steps 100 --metrics-file "$WORK/steps.jsonl"
expect_exit 0 "--max-steps 100"
expect_once out "(stopped by --max-steps)" "the partial epoch is marked"
python3 - "$WORK/steps.jsonl" <<'PY' || fail "--max-steps metrics"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
records = [r for r in records if r["event"] != "step"]
assert records[-1]["event"] == "summary" and records[-1]["steps"] == 100, records[-1]
assert records[0]["complete"] is False and records[0]["step"] == 100, records[0]
print("ok: --max-steps 100 stops after 100 steps with an evaluation")
PY

# --precision bf16 (CPU autocast): the same epoch, still learning, and the banner says so.
run_mpi 2 --data-dir "$FASHION_DIR" --epochs 1 --threads 1 --precision bf16 --min-accuracy 0.78
expect_exit 0 "--precision bf16 reaches --min-accuracy 0.78"
expect_once out "# execution: --mode ddp on cpu, precision bf16, gradient transport mpi" \
  "the banner names device, precision and transport"

# A threshold it cannot reach: exit 1 and says so.
run_mpi 2 --data-dir "$FASHION_DIR" --epochs 1 --max-steps 10 --min-accuracy 0.99
expect_exit 1 "--min-accuracy 0.99 not reached"
expect_once out "BELOW --min-accuracy" "the summary says why"
finish
