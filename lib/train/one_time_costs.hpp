// lib/train/one_time_costs.hpp — provides: pay_one_time_costs (a scratch step), default_generator.
#pragma once

#include <cstdint>

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include "common/networks.hpp"

namespace mnist_ddp::train {

/// LibTorch's default generator of `device`; a handle, so changes through it reach the generator.
inline at::Generator default_generator(c10::Device device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device)
                          : at::detail::getDefaultCPUGenerator();
}

/// Forward, loss and backward of a fresh `architecture` on a zero batch; returns its seconds. The
/// default generators are left as they were (Note [One-time costs before the clock]).
double pay_one_time_costs(config::Model architecture, c10::Device device, std::int64_t batch_size,
                          bool bf16);

}  // namespace mnist_ddp::train
