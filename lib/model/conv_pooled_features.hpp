// lib/model/conv_pooled_features.hpp — provides: conv_pooled_features.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// pooled_features(conv2d(x, weight, bias)): stride 1, no padding; the backward multiplies only
/// through each window's winner. Note [Backward through the pooling's winners].
at::Tensor conv_pooled_features(const at::Tensor& x, const at::Tensor& weight,
                                const at::Tensor& bias);

}  // namespace mnist_ddp::model
