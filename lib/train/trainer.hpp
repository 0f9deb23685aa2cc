// lib/train/trainer.hpp — provides: Trainer, the data-parallel training loop (shard, batch,
// forward, backward, average gradients, step), with per-epoch evaluation, checkpoints at the
// configured points, exact resume, and an agreed stop on preemption signals.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include <torch/optim/optimizer.h>

#include "checkpoint/training_checkpoint.hpp"
#include "data/distributed_sampler.hpp"
#include "train/graph_plan.hpp"
#include "train/step.hpp"

namespace mnist_ddp::train {

/// Trains `model` on this rank's shard of `train_set`: epochs of Step's steps, evaluations,
/// checkpoints and the agreed stop. Every rank must construct it with the same configuration and
/// data; parameters are broadcast from rank 0 at construction. Model and data sets must already
/// be on `plan.device`. With `graphs.capture` full-batch steps are graphed, and on CUDA all of
/// the training runs on one side stream (Note [One stream for a captured training]). The
/// constructor pays the libraries' first-use costs on a scratch network, so that the training
/// clock does not count them (Note [One-time costs before the clock]).
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
  /// Trains the rest of the current epoch, or until `step_limit` or an agreed stop.
  EpochReport train_epoch(std::int64_t step_limit, const TrainerHooks& hooks, bool& stopped);
  /// The step's StepReport (with a LogWindow every --log-every steps).
  void report_step(const StepResult& step, const TrainerHooks& hooks);
  /// Collective: whether any rank has been asked to stop.
  bool agree_to_stop(const TrainerHooks& hooks);
  /// Calls hooks.on_checkpoint, timed as a span.
  void checkpoint_at(const TrainerHooks& hooks, checkpoint::CheckpointPoint point);
  /// Collective: the test set's loss and accuracy over all ranks, under --precision.
  EvalResult evaluate_test_set();
  /// Collective: evaluates now, after `train_seconds` of training in this process, and keeps it in
  /// target_ when it is the first to reach --target-accuracy (the same on every rank).
  EvalReport evaluate_and_report(const TrainerHooks& hooks, double train_seconds);

  const config::TrainConfig& config_;
  c10::Device device_;
  distributed::Communicator& comm_;
  model::Classifier& model_;
  const data::Dataset& train_set_;
  const data::Dataset& test_set_;
  // Before everything that makes tensors or gradient hooks for the steps (Note [One stream for a
  // captured training]).
  TrainingStream stream_;
  data::BatchMaker test_batches_;
  data::DistributedSampler sampler_;
  double one_time_seconds_;  // pay_one_time_costs, at construction
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  checkpoint::TrainProgress progress_;
  RunMetrics metrics_;
  Step step_;
  bool first_step_pending_ = true;
  std::chrono::steady_clock::time_point run_start_;
  double train_seconds_ = 0;  // of the epochs before the current one, in this process
  std::optional<EvalReport> target_;
};

}  // namespace mnist_ddp::train
