// lib/model/pooled_features.hpp — provides: pooled_features, pooled_channels_last (pool + ReLU).
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// relu(max_pool2d(x, 2)).flatten(1); values and gradients equal ATen's, ties included. Note
/// [Fused pooling] in pooled_features.cpp.
at::Tensor pooled_features(const at::Tensor& x);

/// relu(max_pool2d(x, 2)) as a channels-last map, otherwise as pooled_features.
at::Tensor pooled_channels_last(const at::Tensor& x);

}  // namespace mnist_ddp::model
