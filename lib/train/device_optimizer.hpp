// lib/train/device_optimizer.hpp — provides: make_optimizer; DeviceOptimizer, without host values.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include "checkpoint/optimizer_state.hpp"
#include "config/train_config.hpp"

namespace mnist_ddp::train {

/// SGD (with momentum and weight decay) or Adam over `parameters`, as `config` says.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const config::TrainConfig& config,
                                                        std::vector<at::Tensor> parameters);

/// Note [An optimizer step without host values]. LibTorch's SGD and Adam pass the rate and Adam's
/// step count to kernels as host numbers, which a CUDA graph would freeze at capture. So
/// prepare(lr) does the host bookkeeping and writes the changing values into device tensors;
/// apply() is device work alone, the part a capture replays. State stays in the optimizer's own
/// objects, so checkpoints are unchanged; results match Optimizer::step() to float32 rounding.
class DeviceOptimizer {
 public:
  /// `optimizer`, as make_optimizer makes it (one group, no dampening), must outlive this.
  explicit DeviceOptimizer(torch::optim::Optimizer& optimizer);

  /// Host part of a step at rate `lr`; before apply() or the replay that captured it.
  void prepare(double lr);
  /// Device part; every gradient must be defined. A restore replaces the state objects it reads,
  /// so capture apply() only after any restore.
  void apply();

 private:
  void write_device_values(double lr, std::int64_t adam_step);
  void apply_sgd();
  void apply_adam();
  std::vector<at::Tensor> momentum_buffers();  // SGD's, from the optimizer's state
  struct AdamMoments {
    std::vector<at::Tensor> exp_avgs, exp_avg_sqs;
  };
  AdamMoments adam_moments();  // Adam's, from the optimizer's state

  torch::optim::Optimizer& optimizer_;
  const torch::optim::AdamOptions* adam_;  // the optimizer's options: Adam's, or SGD's
  const torch::optim::SGDOptions* sgd_;
  std::vector<at::Tensor> parameters_;
  std::vector<checkpoint::OptimizerStateKey> keys_;  // of parameters_ in optimizer_.state()
  // 0-dim float tensors on the parameters' device; those of the form not built stay undefined.
  at::Tensor lr_;                // fused: lr
  at::Tensor step_;              // fused Adam: t
  at::Tensor neg_lr_;            // foreach SGD: -lr
  at::Tensor neg_step_size_;     // foreach Adam: -lr / (1 - beta1^t)
  at::Tensor bias_correction2_;  // foreach Adam: sqrt(1 - beta2^t)
};

}  // namespace mnist_ddp::train
