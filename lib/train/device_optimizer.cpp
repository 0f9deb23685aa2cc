// lib/train/device_optimizer.cpp — optimizers by name; steps fused (LibTorch >= 2.4) or foreach.
#include "train/device_optimizer.hpp"

#include <cmath>

#include <ATen/ATen.h>
#include <torch/version.h>

#include "common/error.hpp"

// Note [Fused optimizer kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// LibTorch >= 2.4 has torch.optim's fused=True kernels, taking the rate and step count as device
// tensors: one launch for all parameters, where the foreach form takes O(N) launches, each costly
// even inside a CUDA graph.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define MNIST_DDP_FUSED_OPTIMIZERS 1
#else
#define MNIST_DDP_FUSED_OPTIMIZERS 0
#endif

namespace mnist_ddp::train {
namespace {

template <typename State>
State& state_of(torch::optim::Optimizer& optimizer, const checkpoint::OptimizerStateKey& key) {
  const auto found = optimizer.state().find(key);
  if (found == optimizer.state().end()) {
    throw Error(ExitCode::kFailure, "DeviceOptimizer: apply() before prepare()");
  }
  return static_cast<State&>(*found->second);
}

/// The state under `key`, made by `initialise` (on a fresh State) when there is none yet.
template <typename State, typename Initialise>
State& state_or_fresh(torch::optim::Optimizer& optimizer, const checkpoint::OptimizerStateKey& key,
                      const Initialise& initialise) {
  auto& state = optimizer.state()[key];
  if (!state) {
    auto fresh = std::make_unique<State>();
    initialise(*fresh);
    state = std::move(fresh);
  }
  return static_cast<State&>(*state);
}

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> gradients;
  for (const at::Tensor& p : parameters) {
    if (!p.grad().defined()) {
      throw Error(ExitCode::kFailure, "DeviceOptimizer: a parameter has no gradient");
    }
    gradients.push_back(p.grad());
  }
  return gradients;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const config::TrainConfig& config,
                                                        std::vector<at::Tensor> parameters) {
  if (config.optimizer == config::Optimizer::kSgd) {
    return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                               torch::optim::SGDOptions(config.lr)
                                                   .momentum(config.momentum)
                                                   .weight_decay(config.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(std::move(parameters),
                                              torch::optim::AdamOptions(config.lr)
                                                  .betas({config.adam_beta1, config.adam_beta2})
                                                  .weight_decay(config.weight_decay));
}

DeviceOptimizer::DeviceOptimizer(torch::optim::Optimizer& optimizer)
    : optimizer_(optimizer),
      adam_(dynamic_cast<const torch::optim::AdamOptions*>(&optimizer.defaults())),
      sgd_(dynamic_cast<const torch::optim::SGDOptions*>(&optimizer.defaults())),
      parameters_(optimizer.param_groups().at(0).params()) {
  for (const at::Tensor& p : parameters_) keys_.push_back(checkpoint::optimizer_state_key(p));
  if (optimizer.param_groups().size() != 1 || (adam_ == nullptr && sgd_ == nullptr) ||
      (adam_ != nullptr && adam_->amsgrad()) ||
      (sgd_ != nullptr && (sgd_->dampening() != 0 || sgd_->nesterov()))) {
    throw Error(ExitCode::kFailure,
                "DeviceOptimizer steps SGD without dampening or Nesterov momentum, or Adam "
                "without AMSGrad, over one parameter group");
  }
  const at::TensorOptions scalar = at::TensorOptions(at::kFloat).device(parameters_.at(0).device());
#if MNIST_DDP_FUSED_OPTIMIZERS
  lr_ = at::zeros({}, scalar);
  step_ = at::zeros({}, scalar);
#else
  neg_lr_ = at::zeros({}, scalar);
  neg_step_size_ = at::zeros({}, scalar);
  bias_correction2_ = at::ones({}, scalar);
#endif
}

void DeviceOptimizer::prepare(double lr) {
  optimizer_.param_groups().at(0).options().set_lr(lr);
  if (adam_ != nullptr) {
    std::int64_t step = 0;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const at::Tensor& p = parameters_[i];
      auto& adam = state_or_fresh<torch::optim::AdamParamState>(
          optimizer_, keys_[i], [&](torch::optim::AdamParamState& fresh) {
            fresh.step(0);
            fresh.exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
            fresh.exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
          });
      adam.step(adam.step() + 1);
      step = adam.step();  // the same for every parameter: each has a gradient every step
    }
    write_device_values(lr, step);
    return;
  }
  write_device_values(lr, 0);
  if (sgd_->momentum() == 0) return;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    state_or_fresh<torch::optim::SGDParamState>(
        optimizer_, keys_[i], [&](torch::optim::SGDParamState& fresh) {
          fresh.momentum_buffer(at::zeros_like(parameters_[i], at::MemoryFormat::Preserve));
        });
  }
}

// Each fill_ is a kernel launch: write only what this form reads.
#if MNIST_DDP_FUSED_OPTIMIZERS
void DeviceOptimizer::write_device_values(double lr, std::int64_t adam_step) {
  lr_.fill_(lr);
  if (adam_ != nullptr) step_.fill_(static_cast<double>(adam_step));
}
#else
void DeviceOptimizer::write_device_values(double lr, std::int64_t adam_step) {
  if (adam_ == nullptr) {
    neg_lr_.fill_(-lr);
    return;
  }
  const auto [beta1, beta2] = adam_->betas();
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(adam_step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(adam_step));
  neg_step_size_.fill_(-(lr / bias_correction1));
  bias_correction2_.fill_(std::sqrt(bias_correction2));
}
#endif

void DeviceOptimizer::apply() {
  const at::NoGradGuard no_grad;
  if (adam_ != nullptr) {
    apply_adam();
  } else {
    apply_sgd();
  }
}

std::vector<at::Tensor> DeviceOptimizer::momentum_buffers() {
  std::vector<at::Tensor> buffers;
  for (const auto& key : keys_) {
    buffers.push_back(state_of<torch::optim::SGDParamState>(optimizer_, key).momentum_buffer());
  }
  return buffers;
}

DeviceOptimizer::AdamMoments DeviceOptimizer::adam_moments() {
  AdamMoments moments;
  for (const auto& key : keys_) {
    auto& state = state_of<torch::optim::AdamParamState>(optimizer_, key);
    moments.exp_avgs.push_back(state.exp_avg());
    moments.exp_avg_sqs.push_back(state.exp_avg_sq());
  }
  return moments;
}

#if MNIST_DDP_FUSED_OPTIMIZERS

void DeviceOptimizer::apply_sgd() {
  // prepare() made zero buffers, so the first buf = momentum * buf + d_p is d_p, as LibTorch's.
  at::_fused_sgd_(parameters_, gradients_of(parameters_),
                  sgd_->momentum() != 0 ? momentum_buffers() : std::vector<at::Tensor>{},
                  sgd_->weight_decay(), sgd_->momentum(), lr_, /*dampening=*/0.0,
                  /*nesterov=*/false, /*maximize=*/false, /*is_first_step=*/false);
}

void DeviceOptimizer::apply_adam() {
  const auto [exp_avgs, exp_avg_sqs] = adam_moments();
  const auto [beta1, beta2] = adam_->betas();
  // All parameters share one step count (prepare()), hence one tensor.
  at::_fused_adam_(parameters_, gradients_of(parameters_), exp_avgs, exp_avg_sqs,
                   /*max_exp_avg_sqs=*/{}, std::vector<at::Tensor>(parameters_.size(), step_), lr_,
                   beta1, beta2, adam_->weight_decay(), adam_->eps(), /*amsgrad=*/false,
                   /*maximize=*/false);
}

#else  // the foreach form

void DeviceOptimizer::apply_sgd() {
  std::vector<at::Tensor> steps = gradients_of(parameters_);
  if (sgd_->weight_decay() != 0) steps = at::_foreach_add(steps, parameters_, sgd_->weight_decay());
  if (sgd_->momentum() != 0) {
    std::vector<at::Tensor> buffers = momentum_buffers();
    // buf = momentum * buf + d_p (no dampening); d_p = buf
    at::_foreach_mul_(buffers, sgd_->momentum());
    at::_foreach_add_(buffers, steps);
    steps = buffers;
  }
  for (size_t i = 0; i < parameters_.size(); ++i) parameters_[i].addcmul_(steps[i], neg_lr_);
}

void DeviceOptimizer::apply_adam() {
  std::vector<at::Tensor> gradients = gradients_of(parameters_);
  if (adam_->weight_decay() != 0) {
    gradients = at::_foreach_add(gradients, parameters_, adam_->weight_decay());
  }
  auto [exp_avgs, exp_avg_sqs] = adam_moments();
  const auto [beta1, beta2] = adam_->betas();
  at::_foreach_mul_(exp_avgs, beta1);
  at::_foreach_add_(exp_avgs, gradients, 1 - beta1);
  at::_foreach_mul_(exp_avg_sqs, beta2);
  at::_foreach_addcmul_(exp_avg_sqs, gradients, gradients, 1 - beta2);
  std::vector<at::Tensor> denominators = at::_foreach_sqrt(exp_avg_sqs);
  for (at::Tensor& d : denominators) d.div_(bias_correction2_);
  at::_foreach_add_(denominators, adam_->eps());
  const std::vector<at::Tensor> directions = at::_foreach_div(exp_avgs, denominators);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    parameters_[i].addcmul_(directions[i], neg_step_size_);
  }
}

#endif

}  // namespace mnist_ddp::train
