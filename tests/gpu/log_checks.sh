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

# The --communicate-alone runs used NCCL and ended as the plain 1-rank run: test loss within 1e-5
# relative, accuracy within 0.0005 (the mlp's kernels give the same bits run to run, and
# averaging one rank's gradients changes none). The eager one's timeline holds bucket allreduces.
same_as_plain() {
  if ! grep -q 'gradient transport nccl' "$1"; then
    echo "the run did not use NCCL"
    return 1
  fi
  verdict ends-as "$LOG_DIR/nccl_alone_plain.jsonl" "${1%.log}.jsonl" 1e-5 0.0005
}
communicated_alone() {
  same_as_plain "$1" && verdict allreduces "$LOG_DIR/nccl_alone_timeline.json"
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
    verdict ends-as "$LOG_DIR/ddp_nccl_linear.jsonl" "${1%.log}.jsonl" 1e-6 0
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
  graph_on "$1" && verdict device-rates "${1%.log}.jsonl"
}
# 200 replayed steps end with the eager run's parameters (within 1e-5; no dropout in the mlp).
same_parameters_as_eager() {
  graph_on "$1" && verdict same-parameters "$LOG_DIR/graph_equality_eager.pt" \
    "$LOG_DIR/graph_equality.pt"
}
