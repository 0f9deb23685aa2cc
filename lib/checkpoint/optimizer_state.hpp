// lib/checkpoint/optimizer_state.hpp — provides: optimizer_state_tensors and load_optimizer_state,
// the per-parameter state of SGD (momentum buffers) and Adam (step, moments) as named tensors,
// so checkpoints hold plain arrays rather than LibTorch's pickled archives.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

namespace mnist_ddp::checkpoint {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// "optimizer/<parameter index>/<field>" for every state the optimizer holds; parameters
/// without state yet (before the first step) have no entries.
NamedTensors optimizer_state_tensors(torch::optim::Optimizer& optimizer,
                                     const std::vector<at::Tensor>& parameters);

/// Replaces the optimizer's state by the entries of `saved` (as written by
/// optimizer_state_tensors), on the parameters' devices. Throws CheckpointError when an entry
/// does not fit its parameter.
void load_optimizer_state(torch::optim::Optimizer& optimizer,
                          const std::vector<at::Tensor>& parameters,
                          const std::map<std::string, at::Tensor>& saved);

}  // namespace mnist_ddp::checkpoint
