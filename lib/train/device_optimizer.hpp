// lib/train/device_optimizer.hpp — provides: DeviceOptimizer, the step of LibTorch's SGD or Adam
// computed from tensors alone, so that a captured training step replays it with each step's
// learning rate and Adam's step count.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include "checkpoint/optimizer_state.hpp"

namespace mnist_ddp::train {

/// Note [An optimizer step without host values]. torch::optim::SGD and Adam read the learning
/// rate and Adam's step count on the host and hand them to their kernels as numbers: a CUDA
/// graph captures those numbers, so every replay would use the rate and bias correction of the
/// step it was captured in. DeviceOptimizer splits the step in two. prepare(lr), on the host,
/// does the optimizer's bookkeeping (the group's rate, Adam's per-parameter step count, zero
/// state for a parameter's first step: its first update then equals LibTorch's, whose momentum
/// buffer starts as a copy of the first d_p) and writes the values that change from step to step
/// (the rate, Adam's step size lr / (1 - beta1^t) and sqrt(1 - beta2^t), computed in double as
/// LibTorch does) into tensors on the parameters' device. apply() is the update itself, device
/// work alone that reads those tensors: the part a captured step replays. The update is
/// LibTorch 1.13's formula (the gradient plus weight decay; the moments; p += -step_size *
/// exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps), or SGD's momentum buffer and
/// p += -lr * d_p), with the state kept in the optimizer's own state objects, so checkpoints
/// and their restore stay as they are. Products with the changing values are separate kernels
/// (LibTorch's scalar forms may fuse them into one multiply-add), so results agree with
/// Optimizer::step() to the last bits of float32, not always exactly. With LibTorch 2.4 and
/// later, apply() is PyTorch's fused Adam or SGD kernel instead, fed the same state (Note [Fused
/// optimizer kernels] in device_optimizer.cpp).
class DeviceOptimizer {
 public:
  /// Steps `optimizer`, an SGD (no dampening, not Nesterov) or an Adam (not AMSGrad) with one
  /// parameter group, as make_optimizer makes them; it must outlive this.
  explicit DeviceOptimizer(torch::optim::Optimizer& optimizer);

  /// Host part of a step with learning rate `lr`; before apply(), or before the replay of a
  /// step that captured apply().
  void prepare(double lr);
  /// Device part: updates every parameter from its gradient, which must be defined. Reads the
  /// state objects prepare() made; a checkpoint's restore replaces them, so a capture of apply()
  /// must come after any restore.
  void apply();

 private:
  /// The tensors apply() reads for a step with rate `lr` (and Adam's step count `adam_step`).
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
  // What apply() reads (Note [Fused optimizer kernels] in device_optimizer.cpp says which form
  // runs): 0-dim float tensors on the parameters' device; the other form's stay undefined.
  at::Tensor lr_;                // fused: lr
  at::Tensor step_;              // fused Adam: t
  at::Tensor neg_lr_;            // foreach SGD: -lr
  at::Tensor neg_step_size_;     // foreach Adam: -lr / (1 - beta1^t)
  at::Tensor bias_correction2_;  // foreach Adam: sqrt(1 - beta2^t)
};

}  // namespace mnist_ddp::train
