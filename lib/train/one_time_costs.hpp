// lib/train/one_time_costs.hpp — provides: pay_one_time_costs, a scratch step before the clock.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

namespace mnist_ddp::train {

/// Forward, loss and backward of a fresh `model_name` on a zero batch; returns its seconds. The
/// default generators are left as they were (Note [One-time costs before the clock]).
double pay_one_time_costs(const std::string& model_name, c10::Device device,
                          std::int64_t batch_size, bool bf16);

}  // namespace mnist_ddp::train
