// lib/train/trainer.hpp — provides: Trainer, the data-parallel training loop (shard, batch,
// forward, backward, average gradients, step), with per-epoch evaluation and statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <torch/optim/optimizer.h>

#include "config/train_config.hpp"
#include "data/batch_maker.hpp"
#include "data/distributed_sampler.hpp"
#include "dist/communicator.hpp"
#include "model/classifier.hpp"
#include "train/evaluator.hpp"
#include "train/gradient_averager.hpp"

namespace mnist_ddp::train {

/// What one epoch did, reduced over all ranks (identical on every rank).
struct EpochReport {
  std::int64_t epoch = 0;      // 1-based
  std::int64_t step = 0;       // optimizer steps since the start of training
  bool complete = true;        // false when --max-steps ended the epoch early
  double train_loss = 0;       // mean of the per-step losses, averaged over ranks
  EvalResult test;             // evaluation on the test set after the epoch
  std::int64_t images = 0;     // training images of this epoch, all ranks together
  double train_seconds = 0;    // training time of the epoch, excluding evaluation
  double images_per_sec = 0;   // images / train_seconds: global throughput
  double elapsed_seconds = 0;  // since the start of training
};

/// The run as a whole.
struct TrainSummary {
  std::int64_t steps = 0;
  double train_loss = 0;  // of the last epoch
  EvalResult test;        // after the last epoch
  std::int64_t images = 0;
  double train_seconds = 0;
  double images_per_sec = 0;
};

/// Trains `model` on this rank's shard of `train_set`. Every rank must construct it with the
/// same configuration and data; parameters are broadcast from rank 0 at construction.
class Trainer {
 public:
  Trainer(const config::TrainConfig& config, dist::Communicator& comm, model::Classifier& model,
          const data::Dataset& train_set, const data::Dataset& test_set);

  /// Trains until --epochs or --max-steps, calling `on_epoch` after each (also a partial) epoch.
  TrainSummary run(const std::function<void(const EpochReport&)>& on_epoch);

  /// Optimizer steps per epoch on every rank.
  std::int64_t steps_per_epoch() const;

 private:
  /// Trains one epoch, or until `step_limit` total steps; returns the report without test results.
  EpochReport train_epoch(std::int64_t epoch, std::int64_t step_limit);

  const config::TrainConfig& config_;
  dist::Communicator& comm_;
  model::Classifier& model_;
  const data::Dataset& train_set_;
  const data::Dataset& test_set_;
  data::BatchMaker train_batches_;
  data::BatchMaker test_batches_;
  data::DistributedSampler sampler_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  GradientAverager averager_;
  std::int64_t step_ = 0;
};

}  // namespace mnist_ddp::train
