// lib/train/one_time_costs.hpp — provides: pay_one_time_costs, a scratch step before the clock.
#pragma once

#include <cstdint>

#include <c10/core/Device.h>

#include "common/networks.hpp"

namespace mnist_ddp::train {

/// Forward, loss and backward of a fresh `architecture` on a zero batch; returns its seconds. The
/// default generators are left as they were (Note [One-time costs before the clock]).
double pay_one_time_costs(config::Model architecture, c10::Device device, std::int64_t batch_size,
                          bool bf16);

}  // namespace mnist_ddp::train
