// lib/model/pooled_features.hpp — provides: pooled_features, the cnn's 2x2 max-pool, ReLU and
// flatten, and pooled_channels_last, the same pooling and ReLU kept as a channels-last map for a
// convolution after it: each one pass over channels-last activations on the CPU.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// relu(max_pool2d(x, 2)).flatten(1): (B, C, H, W) -> (B, C * (H / 2) * (W / 2)), in C, H, W
/// order. Values and gradients equal ATen's, ties included (the first maximum in row order gets
/// the gradient). See Note [Fused pooling] in pooled_features.cpp for when the fused CPU kernel
/// runs; otherwise it is ATen's operators.
at::Tensor pooled_features(const at::Tensor& x);

/// relu(max_pool2d(x, 2)): (B, C, H, W) -> (B, C, H / 2, W / 2) in channels-last, values and
/// gradients as pooled_features, under the same conditions for the fused kernel.
at::Tensor pooled_channels_last(const at::Tensor& x);

}  // namespace mnist_ddp::model
