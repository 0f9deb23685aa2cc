// lib/train/trainer.hpp — provides: Trainer (the loop, resume), evaluate, pay_one_time_costs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include <torch/optim/optimizer.h>

#include "checkpoint/training_checkpoint.hpp"
#include "data/distributed_sampler.hpp"
#include "train/graphed_step.hpp"
#include "train/step.hpp"

namespace mnist_ddp::train {

/// Rank r evaluates samples r, r + W, ... (no padding); one allreduce gives every rank the whole
/// set's result. Runs where `dataset` lives, as the model must; `bf16`: forward under autocast.
EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, distributed::Communicator& comm,
                    int batch_size, bool bf16 = false);

/// Forward, loss and backward of a fresh `architecture` on a zero batch; returns its seconds. The
/// default generators are left as they were (Note [One-time costs before the clock]).
double pay_one_time_costs(config::Model architecture, c10::Device device, std::int64_t batch_size,
                          bool bf16);

/// Every rank constructs it with the same config and data, already on `plan.device`; rank 0's
/// parameters are broadcast, and first-use costs paid off the clock (pay_one_time_costs).
class Trainer {
 public:
  Trainer(const config::TrainConfig& config, const distributed::DevicePlan& plan,
          distributed::Communicator& comm, model::Classifier& model, const data::Dataset& train_set,
          const data::Dataset& test_set, const GraphPlan& graphs = {});

  /// Trains until --epochs, --max-steps, --target-accuracy or an agreed stop.
  TrainSummary run(const TrainerHooks& hooks);

  /// Collective: the run between steps, identical on every rank (rank 0 writes it).
  checkpoint::CheckpointContents checkpoint();

  /// Every rank, same contents. The writers' world size continues bitwise; another continues the
  /// epoch's sample order where it stopped.
  void restore(const checkpoint::LoadedCheckpoint& saved);

  const checkpoint::TrainProgress& progress() const { return progress_; }

  /// Optimizer steps per full epoch on every rank.
  std::int64_t steps_per_epoch() const;

  /// Collective: the test set's loss and accuracy over all ranks, under --precision.
  EvalResult evaluate_test_set();

 private:
  /// The steps of --epochs on `world_size` ranks, over which --lr-schedule anneals (not cut by
  /// --max-steps: resumable).
  std::int64_t total_steps_on(int world_size) const;
  /// Collective: ends the run with kNotFinite (Note [Stop agreement]); `what`: "the weights are".
  [[noreturn]] void stop_not_finite(const std::string& what = "");
  /// The rest of the epoch, up to `step_limit` or an agreed stop, after `seconds_before` trained.
  EpochReport train_epoch(std::int64_t step_limit, double seconds_before,
                          const TrainerHooks& hooks);
  void report_step(const StepResult& step, const TrainerHooks& hooks);
  /// Collective: whether any rank has been asked to stop.
  bool agree_to_stop(const TrainerHooks& hooks);
  void checkpoint_at(const TrainerHooks& hooks, checkpoint::CheckpointPoint point);
  /// Collective: keeps the first result reaching --target-accuracy in target_.
  EvalReport evaluate_and_report(const TrainerHooks& hooks, double train_seconds);

  const config::TrainConfig& config_;
  c10::Device device_;
  distributed::Communicator& comm_;
  model::Classifier& model_;
  const data::Dataset& train_set_;
  const data::Dataset& test_set_;
  // Before any member that makes tensors or hooks (Note [One stream for a captured training]).
  TrainingStream stream_;
  data::BatchMaker test_batches_;
  data::DistributedSampler sampler_;
  double one_time_seconds_;  // pay_one_time_costs, at construction
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  checkpoint::TrainProgress progress_;
  RunMetrics metrics_;
  Step steps_;
  bool first_step_pending_ = true;
  std::chrono::steady_clock::time_point run_start_;
  std::optional<EvalReport> target_;
};

}  // namespace mnist_ddp::train
