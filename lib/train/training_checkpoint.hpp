// lib/train/training_checkpoint.hpp — provides: TrainProgress and the mapping between a training
// run (model, optimizer, progress, RNG states) and CheckpointContents, with the checks that a
// checkpoint fits the run it is loaded into.
#pragma once

#include <cstdint>

#include <torch/optim/optimizer.h>

#include "config/train_config.hpp"
#include "io/checkpoint_file.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::train {

/// Where training stands; everything needed, with the parameters, to continue exactly.
struct TrainProgress {
  std::int64_t epoch = 0;     // 0-based epoch in progress
  std::int64_t step = 0;      // optimizer steps since the start of training
  std::int64_t position = 0;  // positions of the epoch's (padded) global order already trained
  // Partial sums of the epoch so far, over all ranks, so its report is the same after a resume.
  double loss_sum = 0;
  std::int64_t loss_count = 0;  // rank-steps the loss sum covers
  std::int64_t images = 0;      // training images of the epoch so far, all ranks
};

/// The checkpoint of a run: `rng_states` is (world size, state bytes), one CPU generator state
/// per rank, so dropout continues exactly when the world size is unchanged.
io::CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                       int world_size, const TrainProgress& progress,
                                       model::Classifier& model, torch::optim::Optimizer& optimizer,
                                       const at::Tensor& rng_states);

/// What a checkpoint restores besides parameters and optimizer state.
struct RestoredRun {
  TrainProgress progress;
  int world_size = 0;     // of the run that wrote it
  at::Tensor rng_states;  // (that world size, state bytes)
};

/// Checks that `contents` was written for this model, options and data set size (throws
/// CheckpointError listing every difference), then loads parameters, buffers and optimizer
/// state into `model` and `optimizer` (on their devices).
RestoredRun restore_checkpoint(const io::CheckpointContents& contents,
                               const config::TrainConfig& config, std::int64_t train_size,
                               model::Classifier& model, torch::optim::Optimizer& optimizer);

/// Loads only the parameters and buffers (for evaluation), after checking the model name.
void restore_model(const io::CheckpointContents& contents, const std::string& model_name,
                   model::Classifier& model);

}  // namespace mnist_ddp::train
