// lib/checkpoint/training_checkpoint.hpp — provides: the mapping between a training run (model,
// optimizer, progress, RNG states) and CheckpointContents, with the checks that a checkpoint fits
// the run it is loaded into.
#pragma once

#include <cstdint>
#include <string>

#include <torch/optim/optimizer.h>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_meta.hpp"
#include "config/options.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::checkpoint {

/// The checkpoint of a run: `rng_states` is (world size, state bytes), uint8, one CPU generator
/// state (get_state()) per rank, so dropout continues exactly when the world size is unchanged;
/// `cuda_rng_states` the same for each rank's CUDA generator, for a run on GPUs (undefined on
/// the CPU: then the checkpoint has none).
CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                   int world_size, const TrainProgress& progress,
                                   model::Classifier& model, torch::optim::Optimizer& optimizer,
                                   const at::Tensor& rng_states, const at::Tensor& cuda_rng_states);

/// What a checkpoint restores besides parameters, optimizer state and its header's progress.
struct RestoredRun {
  at::Tensor rng_states;       // (the writers' world size, state bytes)
  at::Tensor cuda_rng_states;  // the same for CUDA generators; undefined when it has none
};

/// Checks that `loaded` was written for this model, options and data set size (throws
/// CheckpointError listing every difference) and that every tensor fits: parameters, buffers and
/// optimizer state present with the model's shapes and types, RNG states that the CPU generator
/// accepts, CUDA generator states (if any) with a uint8 row per rank (throws CheckpointError
/// naming the tensor). Only then loads parameters, buffers and
/// optimizer state into `model` and `optimizer` (on their devices): a refused checkpoint
/// changes neither (Note [Restore is all or nothing]).
RestoredRun restore_checkpoint(const LoadedCheckpoint& loaded, const config::TrainConfig& config,
                               std::int64_t train_size, model::Classifier& model,
                               torch::optim::Optimizer& optimizer);

/// Rank `rank`'s row of `states` (RestoredRun's rng_states or cuda_rng_states) as a tensor of its
/// own: what Generator::set_state is given (Note [A generator state is a tensor of its own]).
at::Tensor generator_state(const at::Tensor& states, std::int64_t rank);

/// The options that shape training (the kTraining ones of `options`) and the data set size the
/// sample positions refer to: a checkpoint only continues a run that agrees on all of them. The
/// world size may differ.
nlohmann::json training_shape(const config::TrainConfig& config, std::int64_t train_size,
                              const config::OptionTable& options = config::train_options());

/// "--model: checkpoint cnn, this run linear; --lr: ..." for every option in which the training
/// shape `saved` (from a checkpoint) differs from `current`; empty when they agree.
std::string shape_differences(const nlohmann::json& saved, const nlohmann::json& current);

/// Loads only the parameters and buffers (for evaluation), after checking the model name and
/// every tensor's presence, shape and type; a refused checkpoint leaves `model` unchanged.
void restore_model(const LoadedCheckpoint& loaded, const std::string& model_name,
                   model::Classifier& model);

}  // namespace mnist_ddp::checkpoint
