// lib/model/pooled_features.hpp — provides: pooled_features and its variants (pool + ReLU).
#pragma once

#include <utility>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// relu(max_pool2d(x, 2)).flatten(1), gradients and ties as ATen's (Note [Fused pooling]).
at::Tensor pooled_features(const at::Tensor& x);

/// pooled_features(x) and each output's winner byte (pool_window's), pixels x channels, for a
/// caller's own backward; x must be a channels-last CPU map with even sides.
std::pair<at::Tensor, at::Tensor> pooled_features_and_winners(const at::Tensor& x);

/// relu(max_pool2d(x, 2)) as a channels-last map, otherwise as pooled_features.
at::Tensor pooled_channels_last(const at::Tensor& x);

}  // namespace mnist_ddp::model
