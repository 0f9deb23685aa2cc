// lib/model/input_conv_pool.hpp — provides: input_conv_pool, a network's first layer on
// single-channel images (a convolution, then the fused 2x2 max-pool and ReLU) as one kernel.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// relu(max_pool2d(conv2d(images, weight, bias), 2)) with stride 1 and no padding: (B, 1, H, W)
/// images and a (C, 1, KH, KW) weight give a (B, C, (H - KH + 1) / 2, (W - KW + 1) / 2) map in
/// channels-last, for a convolution after it. Gradients flow to the weight and the bias; the
/// images need none. Ties and NaN go as in pooled_channels_last. See Note [The input convolution
/// pools as it goes] in input_conv_pool.cpp for when the fused CPU kernel runs; otherwise it is
/// ATen's convolution and pooled_channels_last.
at::Tensor input_conv_pool(const at::Tensor& images, const at::Tensor& weight,
                           const at::Tensor& bias);

}  // namespace mnist_ddp::model
