// lib/train/one_time_costs.hpp — provides: pay_one_time_costs, one forward and backward of a
// scratch network before the training clock starts, so that what a process pays only the first
// time it runs them is not counted as training time.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

namespace mnist_ddp::train {

/// Runs the forward pass, cross-entropy loss and backward pass of a fresh `model_name` network
/// in training mode on a zero batch of `batch_size` images on `device` (under bf16 autocast if
/// `bf16`), waits for the device, and returns the seconds it took. See Note [One-time costs
/// before the clock]. LibTorch's default generators of the CPU and of `device` are left as they
/// were, so the training that follows draws the same numbers as without it.
double pay_one_time_costs(const std::string& model_name, c10::Device device,
                          std::int64_t batch_size, bool bf16);

}  // namespace mnist_ddp::train
