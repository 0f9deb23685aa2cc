#!/usr/bin/env bash
# End to end: mpirun -np 2 on Fashion-MNIST (60k/10k), one epoch of the linear model, must reach
# 78% test accuracy; only rank 0 logs; the metrics file holds the documented records; the run
# stops at --target-accuracy, found with --eval-every, which leaves training unchanged.
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
assert all(r["schema"] == 3 for r in records), records
assert [r["step"] for r in records if r["event"] == "step"] == [100, 200, 300, 400], records
records = [r for r in records if r["event"] != "step"]
assert [r["event"] for r in records] == ["evaluation", "epoch", "summary"], records
evaluation, epoch, summary = records
assert (evaluation["step"], evaluation["test_accuracy"]) == (469, epoch["test_accuracy"]), evaluation
assert 0 < evaluation["train_s"] <= evaluation["elapsed_s"] < evaluation["launch_s"], evaluation
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
assert summary["allreduce_bytes_per_step"] == (784 * 10 + 10 + 1) * 4, summary  # and the stop flag
# The scratch pass before the training clock is part of the start-up, not of the training time.
assert 0 < summary["one_time_costs_s"] < summary["startup_s"], summary
# Wall time and start-up count from the same origin: the run outlasts its first step.
assert summary["startup_s"] < summary["wall_s"], summary
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
records = [r for r in records if r["event"] not in ("step", "evaluation")]
assert records[-1]["event"] == "summary" and records[-1]["steps"] == 100, records[-1]
assert records[0]["complete"] is False and records[0]["step"] == 100, records[0]
print("ok: --max-steps 100 stops after 100 steps with an evaluation")
PY

# --target-accuracy with --eval-every: evaluations every 50 steps, and the run stops at the first
# that reaches 75% (one epoch is 469 steps), with a checkpoint of that step.
run_mpi 2 --data-dir "$FASHION_DIR" --epochs 3 --threads 1 --target-accuracy 0.75 \
  --eval-every 50 --metrics-file "$WORK/target.jsonl" --checkpoint-dir "$WORK/target_ckpt"
expect_exit 0 "--target-accuracy 0.75 --eval-every 50"
expect_once out "(stopped at --target-accuracy)" "the partial epoch is marked"
python3 - "$WORK/target.jsonl" "$WORK/out" "$WORK/target_ckpt" <<'PY' || fail "--target-accuracy"
import glob, json, re, sys
records = [json.loads(line) for line in open(sys.argv[1])]
evaluations = [r for r in records if r["event"] == "evaluation"]
summary = records[-1]
steps = [r["step"] for r in evaluations]
# Every 50 steps, and at the end of each epoch (469 steps) the run gets through.
assert steps == sorted(set(range(50, steps[-1] + 1, 50)) | set(range(469, steps[-1], 469))), steps
assert all(r["test_accuracy"] < 0.75 for r in evaluations[:-1]), evaluations
last = evaluations[-1]
assert last["test_accuracy"] >= 0.75 and last["step"] % 50 == 0, last
assert summary["steps"] == last["step"] and summary["target_reached"] is True, summary
assert summary["target_step"] == last["step"] and summary["target_accuracy"] == 0.75, summary
assert summary["target_train_s"] == last["train_s"] and summary["test_accuracy"] == last["test_accuracy"]
times = [r["train_s"] for r in evaluations]
assert times == sorted(times) and times[0] > 0, times
out = open(sys.argv[2]).read()
line = re.search(r"# target test accuracy 75\.00% reached at step (\d+) \(epoch (\d+)\): ", out)
assert line and int(line.group(1)) == last["step"], out[-600:]
manifest = json.load(open(sorted(glob.glob(sys.argv[3] + "/*.json"))[-1]))
assert manifest["reason"] == "target-reached" and manifest["step"] == last["step"], manifest
print(f"ok: stopped at step {last['step']} with {100 * last['test_accuracy']:.2f}%, "
      f"after {len(evaluations)} evaluations")
PY

# Evaluations do not disturb training: the same 60 steps of the cnn (dropout draws random
# numbers) with and without --eval-every end with the same losses, bit for bit.
CNN=(--data-dir "$FASHION_DIR" --model cnn --batch-size 32 --max-steps 60 --threads 1)
run_mpi 2 "${CNN[@]}" --metrics-file "$WORK/plain.jsonl"
expect_exit 0 "cnn, 60 steps"
run_mpi 2 "${CNN[@]}" --eval-every 20 --metrics-file "$WORK/evaluated.jsonl"
expect_exit 0 "cnn, 60 steps, --eval-every 20"
python3 - "$WORK/plain.jsonl" "$WORK/evaluated.jsonl" <<'PY' || fail "--eval-every changed training"
import json, sys
plain, evaluated = ([json.loads(line) for line in open(path)] for path in sys.argv[1:])
assert [r["step"] for r in evaluated if r["event"] == "evaluation"] == [20, 40, 60], evaluated
for key in ["test_loss", "test_accuracy", "train_loss", "steps"]:
    assert plain[-1][key] == evaluated[-1][key], (key, plain[-1][key], evaluated[-1][key])
print("ok: the same losses with and without --eval-every")
PY

# A target not reached: said so, and the run ends as without it (exit 0; --min-accuracy decides).
run_mpi 2 --data-dir "$FASHION_DIR" --max-steps 30 --target-accuracy 0.99 --eval-every 10
expect_exit 0 "--target-accuracy 0.99 in 30 steps"
expect_once out "# target test accuracy 99.00% not reached (final " "the summary says so"

# The shipped 99% recipe: the file parses and its options train (a few steps, on Fashion-MNIST).
run_mpi 2 --config "$MNIST_DDP_SOURCE_DIR/configs/mnist99.conf" --data-dir "$FASHION_DIR" \
  --max-steps 10 --target-accuracy 0 --threads 1
expect_exit 0 "configs/mnist99.conf, 10 steps"
for line in "model              fastcnn" "optimizer          adam" "adam-beta1         0.7" \
  "lr-schedule        onecycle" "batch-size         128 per rank" \
  "global-batch-size  256"; do
  expect_once out "#   $line" "the recipe's $line"
done
run_mpi 2 --config "$MNIST_DDP_SOURCE_DIR/configs/mnist99-sure.conf" --data-dir "$FASHION_DIR" \
  --max-steps 10 --target-accuracy 0 --threads 1
expect_exit 0 "configs/mnist99-sure.conf, 10 steps"
expect_once out "#   epochs             2" "the sure recipe's two epochs"

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
