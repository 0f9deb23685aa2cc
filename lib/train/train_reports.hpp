// lib/train/train_reports.hpp — provides: what a run reports, and TrainerHooks, apart from Trainer.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include <ATen/core/Tensor.h>

#include "checkpoint/checkpoint_point.hpp"
#include "train/phases.hpp"

namespace mnist_ddp::train {

/// A loss and accuracy over a whole data set, reduced over all ranks.
struct EvalResult {
  double loss = 0;      // mean cross-entropy over the whole set
  double accuracy = 0;  // correct / count, in [0, 1]
  std::int64_t correct = 0;
  std::int64_t count = 0;  // every sample exactly once, whatever the world size
};

using TraceClock = std::chrono::steady_clock;

/// The timeline's spans beside the phases.
inline constexpr const char* kAllreduceSpan = "allreduce";
inline constexpr const char* kEvaluateSpan = "evaluate";
inline constexpr const char* kCheckpointSpan = "checkpoint";
inline constexpr std::array<const char*, 3> kOtherSpanNames = {kAllreduceSpan, kEvaluateSpan,
                                                               kCheckpointSpan};

/// A stretch of this rank's time, for timelines.
struct Span {
  const char* name = "";  // a phase's name (kPhaseNames) or one of kOtherSpanNames
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

/// One test-set evaluation; identical on every rank but the times.
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
  bool stopped = false;         // an agreed stop request ended it
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
  std::string graph_fallback;        // why the capture was given up for eager steps; "": it was not
  std::int64_t allreduce_bytes = 0;  // per rank and optimizer step where ranks communicate
  double one_time_seconds = 0;       // paid before the training clock (pay_one_time_costs)
};

/// on_checkpoint runs on every rank and may run collectives; stop_requested is this rank's view.
struct TrainerHooks {
  std::function<void(const EpochReport&)> on_epoch = [](const EpochReport&) {};
  std::function<void(checkpoint::CheckpointPoint)> on_checkpoint = [](checkpoint::CheckpointPoint) {
  };
  std::function<bool()> stop_requested = [] { return false; };
  /// Optional from here on. Every training batch's sample indices (tests, tracing).
  std::function<void(const at::Tensor&)> on_batch;
  /// Once, right before this process's first training step.
  std::function<void()> on_first_step;
  /// After every optimizer step.
  std::function<void(const StepReport&)> on_step;
  /// After every test-set evaluation.
  std::function<void(const EvalReport&)> on_evaluation;
  /// Every span of this rank (timelines).
  std::function<void(const Span&)> on_span;
  /// When set, called inside the capture of the training step as a CUDA graph (fault injection).
  std::function<void()> in_capture;
};

}  // namespace mnist_ddp::train
