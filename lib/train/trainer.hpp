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

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_point.hpp"
#include "checkpoint/training_checkpoint.hpp"
#include "config/train_config.hpp"
#include "data/batch_maker.hpp"
#include "data/distributed_sampler.hpp"
#include "data/shard_cursor.hpp"
#include "ddp/gradient_reducer.hpp"
#include "ddp/model_replicas.hpp"
#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "model/classifier.hpp"
#include "train/device_optimizer.hpp"
#include "train/evaluator.hpp"
#include "train/graph_plan.hpp"
#include "train/graphed_step.hpp"
#include "train/lr_schedule.hpp"
#include "train/phase_clock.hpp"
#include "train/train_reports.hpp"
#include "train/training_tally.hpp"

namespace mnist_ddp::train {

/// Callbacks of a run. on_checkpoint is called on every rank at each checkpoint point (it may
/// run collectives, e.g. Trainer::checkpoint); stop_requested is this rank's view of a stop
/// signal, which the ranks agree on between steps.
struct TrainerHooks {
  std::function<void(const EpochReport&)> on_epoch = [](const EpochReport&) {};
  std::function<void(checkpoint::CheckpointPoint)> on_checkpoint = [](checkpoint::CheckpointPoint) {
  };
  std::function<bool()> stop_requested = [] { return false; };
  /// When set, called with the sample indices of every training batch (tests, tracing).
  std::function<void(const at::Tensor&)> on_batch;
  /// When set, called once, right before the first training step of this process.
  std::function<void()> on_first_step;
  /// When set, called after every optimizer step (with a LogWindow every --log-every steps).
  std::function<void(const StepReport&)> on_step;
  /// When set, called after every evaluation of the test set (epoch ends and --eval-every).
  std::function<void(const EvalReport&)> on_evaluation;
  /// When set, called with every phase, allreduce and evaluation of this rank (timelines).
  std::function<void(const Span&)> on_span;
};

/// Trains `model` on this rank's shard of `train_set`. Every rank must construct it with the
/// same configuration and data; parameters are broadcast from rank 0 at construction. Model and
/// data sets must already be on `plan.device`; under --mode dp the trainer adds a replica on each
/// other device of `plan.replicas` (Note [DataParallel replicas]). With `graphs.capture`, every
/// full-batch step runs as GraphedStep's body (Note [The step as one CUDA graph]): on CUDA a
/// replayed graph, with all of the training on one side stream (Note [One stream for a captured
/// training]), on the CPU the same device work run eagerly, with the same results as the eager
/// step. The constructor pays the libraries' first-use costs on a scratch network, so that
/// the training clock does not count them (Note [One-time costs before the clock]).
class Trainer {
 public:
  Trainer(const config::TrainConfig& config, const distributed::DevicePlan& plan,
          distributed::Communicator& comm, model::Classifier& model, const data::Dataset& train_set,
          const data::Dataset& test_set, const GraphPlan& graphs = {});

  /// Trains until --epochs, --max-steps, --target-accuracy or an agreed stop.
  TrainSummary run(const TrainerHooks& hooks);

  /// Collective: the checkpoint of the run as it stands between steps (identical on every
  /// rank; only rank 0 needs to write it).
  checkpoint::CheckpointContents checkpoint();

  /// Every rank, with the same contents: continue from a checkpoint. With the world size that
  /// wrote it the run continues bitwise as if never interrupted; with another world size the
  /// epoch's sample order continues where it stopped.
  void restore(const checkpoint::LoadedCheckpoint& saved);

  const checkpoint::TrainProgress& progress() const { return progress_; }

  /// The optimizer steps of --epochs, over which --lr-schedule anneals. --max-steps ends a run
  /// early without reshaping its schedule, as a preemption would, so that a run stopped there
  /// and resumed continues exactly.
  std::int64_t total_steps() const { return total_steps_on(comm_.size()); }
  /// total_steps() of the same run on `world_size` ranks (of a checkpoint's writers).
  std::int64_t total_steps_on(int world_size) const;

  /// Optimizer steps per full epoch on every rank.
  std::int64_t steps_per_epoch() const;

 private:
  /// What one optimizer step did on this rank.
  struct StepResult {
    std::int64_t images = 0;  // of this rank
    double lr = 0;            // the learning rate it used
    PhaseTimes phases;
    bool graphed = false;  // run by graphed_ (its collectives are not timed one by one)
  };
  /// One optimizer step: up to --grad-accum micro-batches of `shard` from position `first`
  /// (advanced past them), communicating on the last, then the optimizer.
  StepResult train_step(const at::Tensor& shard, std::int64_t& first, const TrainerHooks& hooks);
  /// A full-batch step at `first` (advanced past it) by graphed_: the host's part around
  /// graphed_->run().
  StepResult graphed_step(const at::Tensor& shard, std::int64_t& first, const TrainerHooks& hooks);
  /// The device work of a graphed step: the batch at cursor_'s position, forward, backward with
  /// the bucket allreduces, the optimizer's apply() and the loss sums.
  void step_on_device();
  /// Forward and backward of the micro-batch `indices`, one of `micro_batches` in the step; the
  /// bucket allreduces start during its backward when `communicate`. Returns its detached loss.
  at::Tensor train_micro_batch(const at::Tensor& indices, int micro_batches, bool communicate,
                               const TrainerHooks& hooks, PhaseClock& clock);
  /// The step's allreduce spans and StepReport (with a LogWindow every --log-every steps);
  /// `samples_left` of the epoch's shard remain.
  void report_step(const StepResult& step, std::int64_t samples_left, const TrainerHooks& hooks);
  /// Trains the rest of the current epoch, or until `step_limit` or an agreed stop.
  EpochReport train_epoch(std::int64_t step_limit, const TrainerHooks& hooks, bool& stopped);
  /// Collective: whether any rank has been asked to stop.
  bool agree_to_stop(const TrainerHooks& hooks);
  /// Moves the partial epoch sums of every rank into progress_ (collective).
  void gather_epoch_sums();
  /// Calls hooks.on_checkpoint, timed as a span.
  void checkpoint_at(const TrainerHooks& hooks, checkpoint::CheckpointPoint point);
  /// Collective: the log window ending at this step, reduced over all ranks.
  LogWindow reduce_window();
  /// This rank's losses of one micro-batch (several under --mode dp), under --precision.
  std::vector<at::Tensor> micro_batch_losses(const data::Batch& batch);
  /// Collective: the test set's loss and accuracy over all ranks, under --precision.
  EvalResult evaluate_test_set();
  /// Collective: evaluates now, after `train_seconds` of training in this process; reports it
  /// to hooks.on_evaluation and keeps it in target_ when it is the first to reach
  /// --target-accuracy (the same decision on every rank: the result is reduced).
  EvalReport evaluate_and_report(const TrainerHooks& hooks, double train_seconds);
  /// Collective: whether the ranks agreed to stop after the step just taken (Note [Stop
  /// agreement]); on a GPU only every kCudaStopCheckSteps steps and where the host reads the
  /// device next (`device_read_follows`: Note [The device's time in the phases]).
  bool stop_agreed_after_step(bool device_read_follows);
  /// Adds one micro-batch's loss (detached) to the epoch's and the window's sums on the device.
  void sum_loss(const at::Tensor& loss);
  /// Counts that loss in both tallies: sum_loss's host half, which a replayed step does not
  /// repeat.
  void count_loss();

  const config::TrainConfig& config_;
  c10::Device device_;
  distributed::Communicator& comm_;
  model::Classifier& model_;
  const data::Dataset& train_set_;
  const data::Dataset& test_set_;
  // Before everything that makes tensors or gradient hooks for the steps (Note [One stream for a
  // captured training]).
  TrainingStream stream_;
  data::BatchMaker train_batches_;
  data::BatchMaker test_batches_;
  data::DistributedSampler sampler_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  // Steps optimizer_ (Note [An optimizer step without host values]).
  DeviceOptimizer device_optimizer_;
  LrSchedule schedule_;  // after sampler_: its length is counted in the sampler's epochs
  ddp::GradientReducer reducer_;
  std::unique_ptr<ddp::ModelReplicas> replicas_;  // --mode dp only
  // --cuda-graph (graphs.capture) only: the epoch's shard on the device and the captured step.
  std::unique_ptr<data::ShardCursor> cursor_;
  std::unique_ptr<GraphedStep> graphed_;
  checkpoint::TrainProgress progress_;
  // This rank's sums since they were last gathered into progress_, and since the last log window;
  // their loss sums are the two elements of loss_sums_ (Note [One add for both loss sums]).
  at::Tensor loss_sums_;
  TrainingTally epoch_tally_;
  TrainingTally window_tally_;
  bool first_step_pending_ = true;
  std::chrono::steady_clock::time_point run_start_;
  double train_seconds_ = 0;     // of the epochs before the current one, in this process
  double one_time_seconds_ = 0;  // pay_one_time_costs, at construction
  std::optional<EvalReport> target_;
};

}  // namespace mnist_ddp::train
