// lib/train/train_reports.hpp — provides: the value types a training run reports (EvalResult,
// PhaseTimes, Span, LogWindow, StepReport, EpochReport, TrainSummary), apart from the Trainer
// that produces them, so that what shows them (lib/report) depends on these values alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace mnist_ddp::train {

/// A loss and accuracy over a whole data set, reduced over all ranks.
struct EvalResult {
  double loss = 0;      // mean cross-entropy over the whole set
  double accuracy = 0;  // correct / count, in [0, 1]
  std::int64_t correct = 0;
  std::int64_t count = 0;  // every sample exactly once, whatever the world size
};

/// Where this rank's training time went, in seconds.
struct PhaseTimes {
  double data = 0;       // gathering and normalizing batches
  double forward = 0;    // forward pass and loss; under --cuda-graph a graphed step, whole
  double backward = 0;   // backward pass, with the bucket allreduces it starts
  double comm_wait = 0;  // waiting for the gradient allreduces to finish (on a GPU, for the
                         // device: Note [The device's time in the phases])
  double optimizer = 0;  // optimizer step
  double total() const { return data + forward + backward + comm_wait + optimizer; }
  PhaseTimes& operator+=(const PhaseTimes& other) {
    data += other.data;
    forward += other.forward;
    backward += other.backward;
    comm_wait += other.comm_wait;
    optimizer += other.optimizer;
    return *this;
  }
};

using TraceClock = std::chrono::steady_clock;

/// A stretch of this rank's time, for timelines: a training phase, an allreduce, an evaluation.
struct Span {
  const char* name = "";  // "data", "forward", "backward", "comm_wait", "optimizer",
                          // "allreduce", "evaluate", "checkpoint", "graphed_step"
  TraceClock::time_point start;
  TraceClock::time_point end;
  std::int64_t step = 0;   // the optimizer step it belongs to (1-based)
  std::int64_t bytes = 0;  // an allreduce's payload
};

/// The steps since the previous window (every --log-every steps), reduced over all ranks.
struct LogWindow {
  std::int64_t steps = 0;
  double loss = 0;            // mean training loss of these steps over all ranks
  double images_per_sec = 0;  // images of all ranks / this rank's training time in the window
  PhaseTimes phases;          // seconds per rank in the window, averaged over the ranks
};

/// One optimizer step, as every rank sees it right after the step.
struct StepReport {
  std::int64_t step = 0;         // optimizer steps since the start of training, this one included
  std::int64_t epoch = 0;        // 1-based
  std::int64_t epoch_steps = 0;  // optimizer steps of the whole epoch
  std::int64_t epoch_steps_done = 0;  // of them, done now
  std::int64_t images = 0;            // trained in this step by all ranks together
  double seconds = 0;                 // this step on this rank
  double lr = 0;                      // the learning rate this step used (--lr-schedule)
  std::optional<LogWindow> window;    // every --log-every steps (the same steps on every rank)
};

/// One evaluation on the test set: after each epoch and, with --eval-every, between steps.
/// Identical on every rank but the times.
struct EvalReport {
  std::int64_t epoch = 0;  // 1-based: the epoch it happened in
  std::int64_t step = 0;   // optimizer steps since the start of training
  EvalResult test;
  double train_seconds = 0;    // training time in this process so far, evaluations excluded
  double elapsed_seconds = 0;  // since the start of training in this process
  double launch_seconds = 0;   // since this process started (start-up included)
};

/// What one epoch did, reduced over all ranks (identical on every rank, but `phases`).
struct EpochReport {
  std::int64_t epoch = 0;       // 1-based
  std::int64_t step = 0;        // optimizer steps since the start of training
  bool complete = true;         // false when --max-steps or --target-accuracy ended it early
  bool target_reached = false;  // an evaluation in it reached --target-accuracy: the run ends
  double train_loss = 0;        // mean of the per-step losses, averaged over ranks
  EvalResult test;              // evaluation on the test set after the epoch
  std::int64_t images = 0;      // training images of this epoch, all ranks together
  double train_seconds = 0;     // training time of the epoch in this process, excluding evaluation
  double images_per_sec = 0;    // images trained in this process / train_seconds: global throughput
  double elapsed_seconds = 0;   // since the start of training in this process
  PhaseTimes phases;            // this rank's
};

/// The run as a whole (this process's part of it, when resumed).
struct TrainSummary {
  std::int64_t steps = 0;   // optimizer steps since the start of training, resumed ones included
  double train_loss = 0;    // of the last epoch
  EvalResult test;          // after the last epoch
  std::int64_t images = 0;  // trained by this process
  double train_seconds = 0;
  double images_per_sec = 0;
  bool preempted = false;            // a stop signal ended the run early (after a checkpoint)
  std::optional<EvalReport> target;  // the evaluation that reached --target-accuracy, if one did
  PhaseTimes phases;                 // this rank's, all epochs
  std::int64_t graph_nodes = 0;      // --cuda-graph: nodes of the captured step's graph; 0: none
  std::int64_t allreduce_bytes = 0;  // per rank and optimizer step where ranks communicate
  double one_time_seconds = 0;       // paid before the training clock (pay_one_time_costs)
};

}  // namespace mnist_ddp::train
