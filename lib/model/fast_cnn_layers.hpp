// lib/model/fast_cnn_layers.hpp — provides: fastcnn's sizes, fused layers and ConvGeometry.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "model/pool_window.hpp"

namespace mnist_ddp::model {

/// A side after a valid convolution with a `kernel`-wide kernel, then a 2x2 max-pool.
constexpr std::int64_t pooled_side(std::int64_t side, std::int64_t kernel) {
  return (side - kernel + 1) / 2;
}

/// fastcnn's layers; the fused kernels keep conv1's outputs in registers, a compile-time count.
namespace fast_cnn {
constexpr std::int64_t kConv1Outputs = 24, kConv1Kernel = 5, kConv2Outputs = 32, kConv2Kernel = 3;
constexpr std::int64_t kConv2Side = pooled_side(pooled_side(28, kConv1Kernel), kConv2Kernel);
constexpr std::int64_t kFeatures = kConv2Outputs * kConv2Side * kConv2Side;  // fc1's inputs
/// The length of conv_pooled_features' lists of a window's output channels.
constexpr std::int64_t kMaxConv2Outputs = 256;
}  // namespace fast_cnn

/// relu(max_pool2d(conv2d(images, weight, bias), 2)) as a channels-last (B, C, (H - KH + 1) / 2,
/// (W - KW + 1) / 2) map; no gradient to the images. Note [The input convolution pools as it goes].
at::Tensor input_conv_pool(const at::Tensor& images, const at::Tensor& weight,
                           const at::Tensor& bias);

/// pooled_features(conv2d(x, weight, bias)): stride 1, no padding; the backward multiplies only
/// through each window's winner. Note [Backward through the pooling's winners].
at::Tensor conv_pooled_features(const at::Tensor& x, const at::Tensor& weight,
                                const at::Tensor& bias);

/// A fused call's shapes: a (B, in_channels, height, width) input and an (outputs, in_channels,
/// kernel_height, kernel_width) weight.
struct ConvGeometry {
  std::int64_t height, width, in_channels, outputs, kernel_height, kernel_width;
  ConvGeometry(at::IntArrayRef input, at::IntArrayRef weight)
      : height(input[2]),
        width(input[3]),
        in_channels(input[1]),
        outputs(weight[0]),
        kernel_height(weight[2]),
        kernel_width(weight[3]) {}
  std::int64_t pooled_height() const { return pooled_side(height, kernel_height); }
  std::int64_t pooled_width() const { return pooled_side(width, kernel_width); }
  std::int64_t windows() const { return pooled_height() * pooled_width(); }
  std::int64_t pooled_values() const { return windows() * outputs; }
  std::int64_t taps() const { return kernel_height * kernel_width; }
  std::int64_t image_floats() const { return height * width * in_channels; }
  /// The floats of one gradient sum: the weight's (outputs x taps x inputs), then the bias's.
  std::int64_t gradient_sums() const { return outputs * (taps() * in_channels + 1); }
  /// Input pixels from a window's top-left to its winner's output (0 where clipped).
  std::int64_t winner_offset(std::uint8_t winner) const {
    return winner == kClipped ? 0 : (winner / 2) * width + winner % 2;
  }
};

}  // namespace mnist_ddp::model
