// lib/train/trainer.hpp — provides: Trainer, the data-parallel training loop (shard, batch,
// forward, backward, average gradients, step), with per-epoch evaluation, checkpoints at the
// configured points, exact resume, and an agreed stop on preemption signals.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <torch/optim/optimizer.h>

#include "config/train_config.hpp"
#include "data/batch_maker.hpp"
#include "data/distributed_sampler.hpp"
#include "dist/communicator.hpp"
#include "dist/device_plan.hpp"
#include "io/checkpoint_file.hpp"
#include "model/classifier.hpp"
#include "train/evaluator.hpp"
#include "train/gradient_reducer.hpp"
#include "train/model_replicas.hpp"
#include "train/training_checkpoint.hpp"

namespace mnist_ddp::train {

/// Where this rank's training time went, in seconds.
struct PhaseTimes {
  double data = 0;       // gathering and normalizing batches
  double forward = 0;    // forward pass and loss
  double backward = 0;   // backward pass, with the bucket allreduces it starts
  double comm_wait = 0;  // waiting for the gradient allreduces to finish
  double optimizer = 0;  // optimizer step
  double total() const { return data + forward + backward + comm_wait + optimizer; }
  PhaseTimes& operator+=(const PhaseTimes& other);
};

using TraceClock = std::chrono::steady_clock;

/// A stretch of this rank's time, for timelines: a training phase, an allreduce, an evaluation.
struct Span {
  const char* name = "";  // "data", "forward", "backward", "comm_wait", "optimizer",
                          // "allreduce", "evaluate", "checkpoint"
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
  std::optional<LogWindow> window;    // every --log-every steps (the same steps on every rank)
};

/// What one epoch did, reduced over all ranks (identical on every rank, but `phases`).
struct EpochReport {
  std::int64_t epoch = 0;      // 1-based
  std::int64_t step = 0;       // optimizer steps since the start of training
  bool complete = true;        // false when --max-steps ended the epoch early
  double train_loss = 0;       // mean of the per-step losses, averaged over ranks
  EvalResult test;             // evaluation on the test set after the epoch
  std::int64_t images = 0;     // training images of this epoch, all ranks together
  double train_seconds = 0;    // training time of the epoch in this process, excluding evaluation
  double images_per_sec = 0;   // images trained in this process / train_seconds: global throughput
  double elapsed_seconds = 0;  // since the start of training in this process
  PhaseTimes phases;           // this rank's
};

/// The run as a whole (this process's part of it, when resumed).
struct TrainSummary {
  std::int64_t steps = 0;   // optimizer steps since the start of training, resumed ones included
  double train_loss = 0;    // of the last epoch
  EvalResult test;          // after the last epoch
  std::int64_t images = 0;  // trained by this process
  double train_seconds = 0;
  double images_per_sec = 0;
  bool preempted = false;  // a stop signal ended the run early (after a checkpoint)
  PhaseTimes phases;       // this rank's, all epochs
};

/// Why a checkpoint is due; every rank gets the same calls in the same order.
enum class CheckpointPoint { kEveryNSteps, kEpochEnd, kStop };

/// Callbacks of a run. on_checkpoint is called on every rank at each checkpoint point (it may
/// run collectives, e.g. Trainer::checkpoint); stop_requested is this rank's view of a stop
/// signal, which the ranks agree on between steps.
struct TrainerHooks {
  std::function<void(const EpochReport&)> on_epoch = [](const EpochReport&) {};
  std::function<void(CheckpointPoint)> on_checkpoint = [](CheckpointPoint) {};
  std::function<bool()> stop_requested = [] { return false; };
  /// When set, called with the sample indices of every training batch (tests, tracing).
  std::function<void(const at::Tensor&)> on_batch;
  /// When set, called once, right before the first training step of this process.
  std::function<void()> on_first_step;
  /// When set, called after every optimizer step (with a LogWindow every --log-every steps).
  std::function<void(const StepReport&)> on_step;
  /// When set, called with every phase, allreduce and evaluation of this rank (timelines).
  std::function<void(const Span&)> on_span;
};

/// Trains `model` on this rank's shard of `train_set`. Every rank must construct it with the
/// same configuration and data; parameters are broadcast from rank 0 at construction. Model and
/// data sets must already be on `plan.device`; under --mode dp the trainer adds a replica on each
/// other device of `plan.replicas` (Note [DataParallel replicas]).
class Trainer {
 public:
  Trainer(const config::TrainConfig& config, const dist::DevicePlan& plan, dist::Communicator& comm,
          model::Classifier& model, const data::Dataset& train_set, const data::Dataset& test_set);

  /// Trains until --epochs, --max-steps or an agreed stop.
  TrainSummary run(const TrainerHooks& hooks);

  /// Collective: the checkpoint of the run as it stands between steps (identical on every
  /// rank; only rank 0 needs to write it).
  io::CheckpointContents checkpoint();

  /// Every rank, with the same contents: continue from a checkpoint. With the world size that
  /// wrote it the run continues bitwise as if never interrupted; with another world size the
  /// epoch's sample order continues where it stopped.
  void restore(const io::CheckpointContents& contents);

  const TrainProgress& progress() const { return progress_; }

  /// Optimizer steps per full epoch on every rank.
  std::int64_t steps_per_epoch() const;

 private:
  /// Trains the rest of the current epoch, or until `step_limit` or an agreed stop.
  EpochReport train_epoch(std::int64_t step_limit, const TrainerHooks& hooks, bool& stopped);
  /// Collective: whether any rank has been asked to stop.
  bool agree_to_stop(const TrainerHooks& hooks);
  /// Moves the partial epoch sums of every rank into progress_ (collective).
  void gather_epoch_sums();
  /// Calls hooks.on_checkpoint, timed as a span.
  void checkpoint_at(const TrainerHooks& hooks, CheckpointPoint point);
  /// Collective: the log window ending at this step, reduced over all ranks.
  LogWindow reduce_window();
  /// This rank's losses of one micro-batch (several under --mode dp), under --precision.
  std::vector<at::Tensor> micro_batch_losses(const data::Batch& batch);
  /// Collective: the test set's loss and accuracy over all ranks, under --precision.
  EvalResult evaluate_test_set();
  /// Collective: whether the ranks agreed to stop after the step just taken (Note [Stop
  /// agreement]); on a GPU only every kCudaStopCheckSteps steps.
  bool stop_agreed_after_step();

  const config::TrainConfig& config_;
  c10::Device device_;
  dist::Communicator& comm_;
  model::Classifier& model_;
  const data::Dataset& train_set_;
  const data::Dataset& test_set_;
  data::BatchMaker train_batches_;
  data::BatchMaker test_batches_;
  data::DistributedSampler sampler_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  GradientReducer reducer_;
  std::unique_ptr<ModelReplicas> replicas_;  // --mode dp only
  TrainProgress progress_;
  // This rank's loss sum, rank-steps and images of the epoch since they were last gathered
  // into progress_; the loss sum is a tensor on the training device, so the loop never waits
  // for a value.
  at::Tensor epoch_loss_sum_;
  std::int64_t epoch_loss_count_ = 0;
  std::int64_t epoch_images_ = 0;
  // The same for the current log window (--log-every): loss sum, rank-steps, images, phases.
  at::Tensor window_loss_sum_;
  std::int64_t window_losses_ = 0;  // micro-batch losses in window_loss_sum_
  std::int64_t window_steps_ = 0;   // optimizer steps
  std::int64_t window_images_ = 0;  // of this rank
  PhaseTimes window_phases_;
  bool first_step_pending_ = true;
};

}  // namespace mnist_ddp::train
