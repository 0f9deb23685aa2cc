// lib/checkpoint/optimizer_state.cpp — SGD and Adam state to and from named tensors.
#include "checkpoint/optimizer_state.hpp"

#include <limits>
#include <memory>
#include <sstream>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "checkpoint/checkpoint_file.hpp"
#include "common/error.hpp"

namespace mnist_ddp::checkpoint {

namespace {

// A template, so that only the branch of this LibTorch's key type is compiled.
template <typename Key>
Key key_of(const at::Tensor& parameter) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;  // what 1.13's c10::guts::to_string makes of the address
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return parameter.unsafeGetTensorImpl();
  }
}

using StatePointer = typename OptimizerStateMap::mapped_type;

std::string prefix(size_t index) { return "optimizer/" + std::to_string(index) + "/"; }

constexpr const char* kAdamFields[] = {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};

const at::Tensor& required(const std::map<std::string, at::Tensor>& saved,
                           const std::string& name) {
  const auto found = saved.find(name);
  if (found == saved.end()) throw CheckpointError("the checkpoint lacks '" + name + "'");
  return found->second;
}

/// Saved tensor `name` checked and copied to `like`'s device and memory layout: fused kernels walk
/// parameter and state as flat arrays, and in-place updates must not write into the checkpoint.
at::Tensor fitting(const std::map<std::string, at::Tensor>& saved, const std::string& name,
                   const at::Tensor& like) {
  const at::Tensor& tensor = required(saved, name);
  check_fits(name, tensor, like);
  return tensor.to(like.options(), /*non_blocking=*/false, /*copy=*/true,
                   like.suggest_memory_format());
}

/// Adam's step: an int64 scalar in [1, INT64_MAX) (the first step counts itself; the next adds 1).
std::int64_t adam_step(const std::map<std::string, at::Tensor>& saved, const std::string& name) {
  const at::Tensor& step = required(saved, name);
  if (step.scalar_type() != at::kLong || step.dim() != 0) {
    throw CheckpointError("'" + name + "' is " + type_name(step.scalar_type()) + " of shape " +
                          c10::str(step.sizes()) + " in the checkpoint, not an int64 scalar");
  }
  const std::int64_t value = step.item<std::int64_t>();
  if (value < 1 || value == std::numeric_limits<std::int64_t>::max()) {
    throw CheckpointError("'" + name + "' = " + std::to_string(value) +
                          " in the checkpoint, not a step count from 1");
  }
  return value;
}

/// The Adam state of the parameter `p` at `index`, or null when the checkpoint has none.
StatePointer adam_state(const std::map<std::string, at::Tensor>& saved, size_t index,
                        const at::Tensor& p) {
  const std::string base = prefix(index);
  bool any = false;
  for (const char* field : kAdamFields) any = any || saved.count(base + field) != 0;
  if (!any) return nullptr;
  auto state = std::make_unique<torch::optim::AdamParamState>();
  state->step(adam_step(saved, base + "step"));
  state->exp_avg(fitting(saved, base + "exp_avg", p));
  state->exp_avg_sq(fitting(saved, base + "exp_avg_sq", p));
  if (saved.count(base + "max_exp_avg_sq")) {
    state->max_exp_avg_sq(fitting(saved, base + "max_exp_avg_sq", p));
  }
  return state;
}

}  // namespace

OptimizerStateKey optimizer_state_key(const at::Tensor& parameter) {
  return key_of<OptimizerStateKey>(parameter);
}

void check_fits(const std::string& name, const at::Tensor& saved, const at::Tensor& like) {
  if (!saved.sizes().equals(like.sizes())) {
    throw CheckpointError("'" + name + "' has shape " + c10::str(saved.sizes()) +
                          " in the checkpoint, " + c10::str(like.sizes()) + " in the model");
  }
  if (saved.scalar_type() != like.scalar_type()) {
    throw CheckpointError("'" + name + "' is " + type_name(saved.scalar_type()) +
                          " in the checkpoint, " + type_name(like.scalar_type()) + " in the model");
  }
}

NamedTensors optimizer_state_tensors(torch::optim::Optimizer& optimizer,
                                     const std::vector<at::Tensor>& parameters) {
  NamedTensors tensors;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto found = optimizer.state().find(optimizer_state_key(parameters[i]));
    if (found == optimizer.state().end()) continue;
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(found->second.get())) {
      tensors.emplace_back(prefix(i) + "momentum_buffer", sgd->momentum_buffer());
    } else if (const auto* adam =
                   dynamic_cast<const torch::optim::AdamParamState*>(found->second.get())) {
      tensors.emplace_back(prefix(i) + "step", at::scalar_tensor(adam->step(), at::kLong));
      tensors.emplace_back(prefix(i) + "exp_avg", adam->exp_avg());
      tensors.emplace_back(prefix(i) + "exp_avg_sq", adam->exp_avg_sq());
      if (adam->max_exp_avg_sq().defined()) {
        tensors.emplace_back(prefix(i) + "max_exp_avg_sq", adam->max_exp_avg_sq());
      }
    } else {
      throw Error(ExitCode::kFailure, "checkpoints support the state of SGD and Adam only");
    }
  }
  return tensors;
}

std::vector<std::string> optimizer_state_names(torch::optim::Optimizer& optimizer,
                                               std::size_t parameter_count) {
  const bool is_adam = dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < parameter_count; ++i) {
    if (is_adam) {
      for (const char* field : kAdamFields) names.push_back(prefix(i) + field);
    } else {
      names.push_back(prefix(i) + "momentum_buffer");
    }
  }
  return names;
}

void load_optimizer_state(torch::optim::Optimizer& optimizer,
                          const std::vector<at::Tensor>& parameters,
                          const std::map<std::string, at::Tensor>& saved) {
  const bool is_adam = dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr;
  // Every state is built and checked first; the optimizer changes only once all of them fit.
  std::vector<std::pair<OptimizerStateKey, StatePointer>> states;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const at::Tensor& p = parameters[i];
    if (is_adam) {
      if (StatePointer state = adam_state(saved, i, p)) {
        states.emplace_back(optimizer_state_key(p), std::move(state));
      }
    } else if (saved.count(prefix(i) + "momentum_buffer")) {
      auto state = std::make_unique<torch::optim::SGDParamState>();
      state->momentum_buffer(fitting(saved, prefix(i) + "momentum_buffer", p));
      states.emplace_back(optimizer_state_key(p), std::move(state));
    }
  }
  optimizer.state().clear();
  for (auto& [key, state] : states) optimizer.state()[key] = std::move(state);
}

}  // namespace mnist_ddp::checkpoint
