# tests/gpu/log_checks.sh — provides: the log checks of tests/gpu/run.sh's runs. Each takes the
# run's log (and reads the files the run left in LOG_DIR), returns 0 when the run did what it
# should, and otherwise prints why not. Sourced by run.sh, which names one per `check`.
# shellcheck shell=bash

# Log checks of the NCCL test cases: on N ranks they ran on GPUs, not skipped; on more ranks than
# GPUs, make_nccl_communicator refused.
nccl_cases_ran() {
  if ! grep -q 'test cases: *[1-9][0-9]* | *[1-9][0-9]* passed | *0 failed' "$1"; then
    echo "no doctest summary with passed NCCL test cases and 0 failed"
    return 1
  fi
  if grep -q -e 'collectives skipped' -e 'staging skipped' "$1"; then
    echo "the NCCL collectives were skipped: $(grep -m1 -o -e 'fewer GPUs than ranks' "$1")"
    return 1
  fi
}
replay_cases_ran() {
  grep -q 'test cases: *4 | *4 passed | *0 failed' "$1" && return 0
  echo "no doctest summary with the four replay test cases passed"
  return 1
}
more_ranks_refused() {
  grep -q 'fewer GPUs than ranks' "$1" && return 0
  echo "more ranks than GPUs were not refused"
  return 1
}
# Exit 2 is also what an unknown option gives: the refusal must be about the mode.
refused_for_mode() {
  if grep -q -i -e 'unrecognised option' -e 'unknown option' -e 'invalid option' "$1"; then
    echo "exit 2 came from an option error, not from refusing --mode dp"
    return 1
  fi
}

# ends_as REFERENCE RUN LOSS ACCURACY: the metrics summary RUN ended within LOSS (relative) of
# REFERENCE's test loss and within ACCURACY of its test accuracy; else says both.
ends_as() {
  py - "$@" <<'EOF'
import json, os, sys
reference, run, loss, accuracy = sys.argv[1:5]
try:
    a, b = (json.loads(open(path).read().splitlines()[-1]) for path in (reference, run))
except Exception as e:
    print("unreadable metrics (%s)" % e)
    sys.exit(1)
if (abs(a["test_loss"] - b["test_loss"]) > float(loss) * abs(a["test_loss"]) or
        abs(a["test_accuracy"] - b["test_accuracy"]) > float(accuracy)):
    print("ended at test loss %.9f (%.2g relative), accuracy %.4f; %s at %.9f, %.4f"
          % (b["test_loss"], abs(a["test_loss"] - b["test_loss"]) / abs(a["test_loss"]),
             b["test_accuracy"], os.path.basename(reference)[:-6], a["test_loss"],
             a["test_accuracy"]))
    sys.exit(1)
EOF
}

# The --communicate-alone runs used NCCL and ended as the plain 1-rank run: test loss within 1e-5
# relative, accuracy within 0.0005 (the mlp's kernels give the same bits run to run, and
# averaging one rank's gradients changes none). The eager one's timeline holds bucket allreduces.
same_as_plain() {
  if ! grep -q 'gradient transport nccl' "$1"; then
    echo "the run did not use NCCL"
    return 1
  fi
  ends_as "$LOG_DIR/nccl_alone_plain.jsonl" "${1%.log}.jsonl" 1e-5 0.0005
}
communicated_alone() {
  same_as_plain "$1" || return 1
  py - "$LOG_DIR/nccl_alone_timeline.json" <<'EOF'
import json, sys
try:
    spans = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
             if e.get("ph") == "X" and e.get("name") == "allreduce"]
except Exception as e:
    print("unreadable timeline (%s)" % e)
    sys.exit(1)
if not spans:
    print("no allreduce in the timeline")
    sys.exit(1)
EOF
}
communicated_alone_graphed() {
  graph_on "$1" && same_as_plain "$1"
}

# The resumed run replayed graphs from step 400 and, where ddp_nccl_linear ran (the same training
# eager and uninterrupted), ended at its test loss within 1e-6 relative: the linear model's
# kernels give the same bits run to run, so a resume that lost state shows.
resumed_at_400() {
  graph_on "$1" || return 1
  if ! grep -q 'resum.*step 400' "$1"; then
    echo "the log does not say it resumed at step 400"
    return 1
  fi
  if [[ ! -s $LOG_DIR/model.pt ]]; then
    echo "no exported model"
    return 1
  fi
  [[ ! -s $LOG_DIR/ddp_nccl_linear.jsonl ]] ||
    ends_as "$LOG_DIR/ddp_nccl_linear.jsonl" "${1%.log}.jsonl" 1e-6 0
}

# --mode dp under the default --cuda-graph auto: eager steps, and the banner says why.
dp_eager() {
  grep -q '# cuda graph: off (--mode dp' "$1" && return 0
  echo "the banner does not say '# cuda graph: off (--mode dp ...)': $(grep -m1 '# cuda graph' \
    "$1" || echo none)"
  return 1
}

# --cuda-graph (Note [The step as one CUDA graph]): the banner says the steps replay a graph.
graph_on() {
  grep -q '# cuda graph: on' "$1" && return 0
  echo "the banner does not say '# cuda graph: on': $(grep -m1 '# cuda graph' "$1" || echo none)"
  return 1
}
# And its log windows' images/s count the device's time (Note [The device's time in the phases]):
# the median window claims at most twice its epoch's images/s. Counting only the host's time,
# which queues a whole replayed step with one call, the windows would claim the launch rate. The
# graphed steps' phases are launch and device: every window and the summary have both, and the
# device's time is not taken for comm wait.
graph_on_device_rates() {
  graph_on "$1" || return 1
  py - "${1%.log}.jsonl" <<'EOF'
import json, statistics, sys
try:
    records = [json.loads(line) for line in open(sys.argv[1])]
except Exception as e:
    print("unreadable metrics (%s)" % e)
    sys.exit(1)
epochs = {r["epoch"]: r["images_per_sec"] for r in records if r.get("event") == "epoch"}
ratios = [r["images_per_sec"] / epochs[r["epoch"]] for r in records
          if r.get("event") == "step" and epochs.get(r["epoch"])]
if not ratios:
    print("no log window in the metrics")
    sys.exit(1)
if statistics.median(ratios) > 2:
    print("the log windows claim %.1f times their epoch's images/s (median): host time alone?"
          % statistics.median(ratios))
    sys.exit(1)
windows = [r["phases"] for r in records if r.get("event") == "step"]
summary = [r["phases_rank0"] for r in records if r.get("event") == "summary"]
for phases in windows + summary:
    if "launch_s" not in phases or "device_s" not in phases:
        print("no launch_s and device_s in the phases of a graphed run: %s" % sorted(phases))
        sys.exit(1)
if not summary or summary[-1]["device_s"] <= summary[-1]["comm_wait_s"]:
    print("the summary's device wait is not beyond its comm wait: %s" % summary[-1:])
    sys.exit(1)
EOF
}
# 200 replayed steps end with the eager run's parameters (within 1e-5; no dropout in the mlp).
same_parameters_as_eager() {
  graph_on "$1" || return 1
  py - "$LOG_DIR/graph_equality_eager.pt" "$LOG_DIR/graph_equality.pt" <<'EOF'
import sys, torch
try:
    a = torch.jit.load(sys.argv[1], map_location="cpu").state_dict()
    b = torch.jit.load(sys.argv[2], map_location="cpu").state_dict()
except Exception as e:
    print("unreadable exported model (%s)" % e)
    sys.exit(1)
worst = max((a[k] - b[k]).abs().max().item() for k in a)
if sorted(a) != sorted(b) or worst > 1e-5:
    print("parameters differ from the eager run's by %.3g (> 1e-5)" % worst)
    sys.exit(1)
EOF
}
