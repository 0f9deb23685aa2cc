// lib/checkpoint/optimizer_state.hpp — provides: SGD/Adam state as named tensors, check_fits.
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

namespace mnist_ddp::checkpoint {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Optimizer state is keyed by the parameter's TensorImpl address: as text in LibTorch 1.13.
using OptimizerStateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;
using OptimizerStateKey = typename OptimizerStateMap::key_type;

/// The key of `parameter`'s entry in Optimizer::state().
OptimizerStateKey optimizer_state_key(const at::Tensor& parameter);

/// "optimizer/<parameter index>/<field>" for every state held (none before the first step).
NamedTensors optimizer_state_tensors(torch::optim::Optimizer& optimizer,
                                     const std::vector<at::Tensor>& parameters);

/// Every name optimizer_state_tensors can give for `optimizer` with `parameter_count` parameters.
std::vector<std::string> optimizer_state_names(torch::optim::Optimizer& optimizer,
                                               std::size_t parameter_count);

/// Replaces the optimizer's state by `saved`'s entries, on the parameters' devices. Checks all
/// first: CheckpointError names a missing or ill-fitting entry and leaves the optimizer as it was.
void load_optimizer_state(torch::optim::Optimizer& optimizer,
                          const std::vector<at::Tensor>& parameters,
                          const std::map<std::string, at::Tensor>& saved);

/// Throws CheckpointError unless saved tensor `name` has `like`'s shape and type (never converts).
void check_fits(const std::string& name, const at::Tensor& saved, const at::Tensor& like);

}  // namespace mnist_ddp::checkpoint
