// lib/checkpoint/optimizer_state.hpp — provides: optimizer_state_tensors and load_optimizer_state,
// the per-parameter state of SGD (momentum buffers) and Adam (step, moments) as named tensors,
// so checkpoints hold plain arrays rather than LibTorch's pickled archives; check_fits, the check
// that a saved tensor fits the tensor it is loaded into, type_name, and optimizer_state_key.
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

namespace mnist_ddp::checkpoint {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// LibTorch 1.13 keys optimizer state by the text of the parameter's TensorImpl address,
// LibTorch 2.x by the address itself; the map's key type says which.
using OptimizerStateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;
using OptimizerStateKey = typename OptimizerStateMap::key_type;

/// The key of `parameter`'s entry in Optimizer::state().
OptimizerStateKey optimizer_state_key(const at::Tensor& parameter);

/// "optimizer/<parameter index>/<field>" for every state the optimizer holds; parameters
/// without state yet (before the first step) have no entries.
NamedTensors optimizer_state_tensors(torch::optim::Optimizer& optimizer,
                                     const std::vector<at::Tensor>& parameters);

/// Every name optimizer_state_tensors can give for `optimizer` with `parameter_count` parameters.
std::vector<std::string> optimizer_state_names(torch::optim::Optimizer& optimizer,
                                               std::size_t parameter_count);

/// Replaces the optimizer's state by the entries of `saved` (as written by
/// optimizer_state_tensors), copied onto the parameters' devices. Throws CheckpointError naming
/// the entry when one is missing (an Adam state needs step, exp_avg and exp_avg_sq), does not
/// have its parameter's shape and type, or holds a step that is not an int64 scalar from 1. Every
/// entry is checked before the state changes: after a throw the optimizer is as it was.
void load_optimizer_state(torch::optim::Optimizer& optimizer,
                          const std::vector<at::Tensor>& parameters,
                          const std::map<std::string, at::Tensor>& saved);

/// The element type as the checkpoint format names it ("float32"; Note [Checkpoint format]), or
/// LibTorch's name for a type the format does not hold.
std::string type_name(at::ScalarType type);

/// Throws CheckpointError unless `saved`, the checkpoint's tensor `name`, has the shape and the
/// element type of `like`, the model's tensor it is loaded into. A saved tensor is never
/// converted: float64 weights for a float32 model are a checkpoint of another build.
void check_fits(const std::string& name, const at::Tensor& saved, const at::Tensor& like);

}  // namespace mnist_ddp::checkpoint
