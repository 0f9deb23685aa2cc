// lib/checkpoint/optimizer_state.cpp — SGD and Adam state to and from named tensors.
#include "checkpoint/optimizer_state.hpp"

#include <sstream>
#include <type_traits>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

// LibTorch 1.13 keys optimizer state by the text of the parameter's TensorImpl address,
// LibTorch 2.x by the address itself; the map's key type says which.
using StateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;
using StateKey = typename StateMap::key_type;

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

std::string prefix(size_t index) { return "optimizer/" + std::to_string(index) + "/"; }

/// The saved tensor `name`, checked against `like`'s shape, on `like`'s device.
at::Tensor fitting(const std::map<std::string, at::Tensor>& saved, const std::string& name,
                   const at::Tensor& like) {
  const at::Tensor& tensor = saved.at(name);
  if (!tensor.sizes().equals(like.sizes())) {
    throw CheckpointError("optimizer state '" + name + "' has the wrong shape for its parameter");
  }
  return tensor.to(like.options());
}

}  // namespace

NamedTensors optimizer_state_tensors(torch::optim::Optimizer& optimizer,
                                     const std::vector<at::Tensor>& parameters) {
  NamedTensors tensors;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto found = optimizer.state().find(key_of<StateKey>(parameters[i]));
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

void load_optimizer_state(torch::optim::Optimizer& optimizer,
                          const std::vector<at::Tensor>& parameters,
                          const std::map<std::string, at::Tensor>& saved) {
  optimizer.state().clear();
  const bool is_adam = dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const at::Tensor& p = parameters[i];
    if (is_adam && saved.count(prefix(i) + "exp_avg")) {
      auto state = std::make_unique<torch::optim::AdamParamState>();
      state->step(saved.at(prefix(i) + "step").item<std::int64_t>());
      state->exp_avg(fitting(saved, prefix(i) + "exp_avg", p));
      state->exp_avg_sq(fitting(saved, prefix(i) + "exp_avg_sq", p));
      if (saved.count(prefix(i) + "max_exp_avg_sq")) {
        state->max_exp_avg_sq(fitting(saved, prefix(i) + "max_exp_avg_sq", p));
      }
      optimizer.state()[key_of<StateKey>(p)] = std::move(state);
    } else if (!is_adam && saved.count(prefix(i) + "momentum_buffer")) {
      auto state = std::make_unique<torch::optim::SGDParamState>();
      state->momentum_buffer(fitting(saved, prefix(i) + "momentum_buffer", p));
      optimizer.state()[key_of<StateKey>(p)] = std::move(state);
    }
  }
}

}  // namespace mnist_ddp::checkpoint
