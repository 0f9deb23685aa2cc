// lib/train/gradient_averager.hpp — provides: GradientAverager, which averages all gradients
// across ranks with one fused allreduce per step.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "dist/communicator.hpp"

namespace mnist_ddp::train {

/// Averages the gradients of `parameters` across ranks: copy into one flat buffer, one
/// allreduce, copy back. For models of this size one message beats many small ones.
class GradientAverager {
 public:
  GradientAverager(dist::Communicator& comm, std::vector<at::Tensor> parameters);

  /// Call after backward on every rank. A parameter without a gradient counts as zeros and
  /// gets the averaged gradient (LibTorch 2.x zero_grad leaves gradients undefined).
  /// `stop_requested` travels in the same message (Note [Stop agreement]); returns whether any
  /// rank requested a stop.
  bool average(bool stop_requested);

 private:
  dist::Communicator& comm_;
  std::vector<at::Tensor> parameters_;
  at::Tensor flat_;  // all gradients back to back, in parameter order, then the stop flag
};

}  // namespace mnist_ddp::train
