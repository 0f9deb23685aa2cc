// lib/checkpoint/training_checkpoint.hpp — provides: a run to and from a checkpoint, checked.
#pragma once

#include <cstdint>
#include <string>

#include <torch/optim/optimizer.h>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_meta.hpp"
#include "config/options.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::checkpoint {

/// The checkpoint of a run. `rng_states`: uint8 (world size, bytes), each rank's CPU get_state(),
/// so dropout continues exactly; `cuda_rng_states` likewise, undefined on the CPU.
CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                   int world_size, const TrainProgress& progress,
                                   model::Classifier& model, torch::optim::Optimizer& optimizer,
                                   const at::Tensor& rng_states, const at::Tensor& cuda_rng_states);

/// What a checkpoint restores besides parameters, optimizer state and its header's progress.
struct RestoredRun {
  at::Tensor rng_states;       // (the writers' world size, state bytes)
  at::Tensor cuda_rng_states;  // the same for CUDA generators; undefined when it has none
};

/// Checks `loaded` fits this run's options, data size and tensors (CheckpointError lists each
/// difference), then loads it into `model` and `optimizer` (Note [Restore is all or nothing]).
RestoredRun restore_checkpoint(const LoadedCheckpoint& loaded, const config::TrainConfig& config,
                               std::int64_t train_size, model::Classifier& model,
                               torch::optim::Optimizer& optimizer);

/// Row `rank`, cloned for set_state (Note [A generator state is a tensor of its own]).
at::Tensor generator_state(const at::Tensor& states, std::int64_t rank);

/// The kTraining options and data set size that a resumed run must agree on (world size need not).
nlohmann::json training_shape(const config::TrainConfig& config, std::int64_t train_size,
                              const config::OptionTable& options = config::train_options());

/// "--model: checkpoint cnn, this run linear; ..." for each difference; empty when they agree.
std::string shape_differences(const nlohmann::json& saved, const nlohmann::json& current);

/// Loads only parameters and buffers (for evaluation), each checked before any is copied.
void restore_model(const LoadedCheckpoint& loaded, config::Model architecture,
                   model::Classifier& model);

}  // namespace mnist_ddp::checkpoint
