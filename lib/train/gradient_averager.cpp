// lib/train/gradient_averager.cpp — the fused allreduce of all gradients.
#include "train/gradient_averager.hpp"

#include <ATen/ATen.h>

namespace mnist_ddp::train {

GradientAverager::GradientAverager(dist::Communicator& comm, std::vector<at::Tensor> parameters)
    : comm_(comm), parameters_(std::move(parameters)) {
  std::int64_t total = 0;
  for (const at::Tensor& p : parameters_) total += p.numel();
  flat_ = at::empty({total + 1}, parameters_.empty() ? at::TensorOptions(at::kFloat)
                                                     : parameters_.front().options());
}

bool GradientAverager::average(bool stop_requested) {
  if (comm_.size() == 1) return stop_requested;  // nothing to average with
  std::int64_t offset = 0;
  for (const at::Tensor& p : parameters_) {
    at::Tensor slot = flat_.narrow(0, offset, p.numel());
    const at::Tensor& grad = p.grad();
    if (grad.defined()) {
      slot.copy_(grad.reshape({-1}));
    } else {
      slot.zero_();
    }
    offset += p.numel();
  }
  flat_[offset].fill_(stop_requested ? 1.0 : 0.0);
  comm_.all_reduce(flat_, dist::ReduceOp::kAverage);
  offset = 0;
  for (at::Tensor& p : parameters_) {
    at::Tensor averaged = flat_.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined()) {
      p.mutable_grad().copy_(averaged);
    } else {
      p.mutable_grad() = averaged.clone();
    }
    offset += p.numel();
  }
  return flat_[offset].item<double>() > 0;  // the average of 0/1 flags is > 0 if any was 1
}

}  // namespace mnist_ddp::train
