// lib/model/input_conv_pool.hpp — provides: input_conv_pool: conv, 2x2 max-pool, ReLU in one.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// relu(max_pool2d(conv2d(images, weight, bias), 2)), stride 1, no padding, as a channels-last
/// (B, C, (H - KH + 1) / 2, (W - KW + 1) / 2) map; no gradient to the images. Note [The input
/// convolution pools as it goes].
at::Tensor input_conv_pool(const at::Tensor& images, const at::Tensor& weight,
                           const at::Tensor& bias);

}  // namespace mnist_ddp::model
