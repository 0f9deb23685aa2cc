// lib/model/input_conv_pool.cpp — the first convolution pooled as it goes, with its backward.
#include "model/input_conv_pool.hpp"

#include <cstdint>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "model/autocast_scope.hpp"
#include "model/channels_last.hpp"
#include "model/pool_window.hpp"
#include "model/pooled_features.hpp"

namespace mnist_ddp::model {
namespace {

// Note [The input convolution pools as it goes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A one-channel convolution is too little work per pixel for oneDNN, and its full-size output and
// gradient cost more memory traffic than the arithmetic. This kernel computes each 2x2 window's
// outputs in registers, pools them there (pool_window), and sends the window's gradient
// (unpool_window) straight into the weight's: the full-size map never exists.
// - Sums run in tap order, so values differ from oneDNN's in the last bits; outputs tie only on
//   equal patches, which give the weight the same gradient whichever wins.
// - The weight gradient is summed per image, then over images in order: the same bits at any
//   thread count.
// - Only float32 CPU images without gradient, outside autocast, kChannels outputs, an even output
//   size, AVX2 and FMA (-ffp-contract=fast makes a multiply-add one FMA); else ATen.

/// fastcnn's conv1: a window's 4 x 24 outputs stay in registers only with a compile-time count.
constexpr std::int64_t kChannels = 24;

/// One call's shapes: images height x width, kernel height x width, and the pooled map.
struct Geometry {
  std::int64_t height, width, kernel_height, kernel_width;
  std::int64_t pooled_height() const { return (height - kernel_height + 1) / 2; }
  std::int64_t pooled_width() const { return (width - kernel_width + 1) / 2; }
  std::int64_t pooled_values() const { return pooled_height() * pooled_width() * kChannels; }
  std::int64_t taps() const { return kernel_height * kernel_width; }
  /// The floats of one image's gradient sums: the weight's (taps x channels), then the bias's.
  std::int64_t gradient_sums() const { return (taps() + 1) * kChannels; }
};

/// The four input pixels tap (ky, kx) multiplies in pooled pixel (py, px)'s window, row order.
struct WindowInputs {
  float value[4];
  WindowInputs(const float* image, const Geometry& g, std::int64_t py, std::int64_t px,
               std::int64_t ky, std::int64_t kx)
      : WindowInputs(image + (2 * py + ky) * g.width + 2 * px + kx, g.width) {}

 private:
  WindowInputs(const float* top_left, std::int64_t width)
      : value{top_left[0], top_left[1], top_left[width], top_left[width + 1]} {}
};

/// One image's pooled map (pixels x channels) and winners; `taps` is (KH * KW) x channels.
[[gnu::always_inline]] inline void conv_pool_image(const float* __restrict image,
                                                   const float* __restrict taps,
                                                   const float* __restrict bias, const Geometry& g,
                                                   float* __restrict pooled,
                                                   std::uint8_t* __restrict winners) {
  for (std::int64_t py = 0; py < g.pooled_height(); ++py) {
    for (std::int64_t px = 0; px < g.pooled_width(); ++px) {
      // The window's convolution outputs: top-left, top-right, bottom-left, bottom-right.
      float window[4][kChannels];
      for (auto& output : window) {
        for (std::int64_t c = 0; c < kChannels; ++c) output[c] = bias[c];
      }
      for (std::int64_t ky = 0; ky < g.kernel_height; ++ky) {
        for (std::int64_t kx = 0; kx < g.kernel_width; ++kx) {
          const float* tap = taps + (ky * g.kernel_width + kx) * kChannels;
          const WindowInputs in(image, g, py, px, ky, kx);
          for (int q = 0; q < 4; ++q) {
            for (std::int64_t c = 0; c < kChannels; ++c) window[q][c] += tap[c] * in.value[q];
          }
        }
      }
      const std::int64_t at = (py * g.pooled_width() + px) * kChannels;
      pool_window(window[0], window[2], kChannels, pooled + at, winners + at);
    }
  }
}

/// One image's gradient sums (Geometry::gradient_sums) from the pooled map's gradient.
[[gnu::always_inline]] inline void conv_pool_image_backward(const float* __restrict image,
                                                            const float* __restrict grad_pooled,
                                                            const std::uint8_t* __restrict winners,
                                                            const Geometry& g,
                                                            float* __restrict sums) {
  float* __restrict grad_taps = sums;
  float* __restrict grad_bias = sums + g.taps() * kChannels;
  for (std::int64_t i = 0; i < g.gradient_sums(); ++i) sums[i] = 0;
  for (std::int64_t py = 0; py < g.pooled_height(); ++py) {
    for (std::int64_t px = 0; px < g.pooled_width(); ++px) {
      const std::int64_t at = (py * g.pooled_width() + px) * kChannels;
      // The gradient of each of the window's convolution outputs (zero but for the winner's).
      float window[4][kChannels];
      unpool_window(grad_pooled + at, winners + at, kChannels, window[0], window[2]);
      for (std::int64_t c = 0; c < kChannels; ++c) {
        grad_bias[c] += (window[0][c] + window[1][c]) + (window[2][c] + window[3][c]);
      }
      for (std::int64_t ky = 0; ky < g.kernel_height; ++ky) {
        for (std::int64_t kx = 0; kx < g.kernel_width; ++kx) {
          float* grad_tap = grad_taps + (ky * g.kernel_width + kx) * kChannels;
          const WindowInputs in(image, g, py, px, ky, kx);
          for (std::int64_t c = 0; c < kChannels; ++c) {
            grad_tap[c] += window[0][c] * in.value[0] + window[1][c] * in.value[1] +
                           window[2][c] * in.value[2] + window[3][c] * in.value[3];
          }
        }
      }
    }
  }
}

// Compiled for AVX2 and FMA as functions of their own: a lambda in at::parallel_for does not
// take its enclosing function's target.

[[gnu::target("avx2,fma")]] void conv_pool_images(std::int64_t begin, std::int64_t end,
                                                  const float* images, const float* taps,
                                                  const float* bias, const Geometry& g,
                                                  float* pooled, std::uint8_t* winners) {
  const std::int64_t pixels = g.height * g.width;
  for (std::int64_t i = begin; i < end; ++i) {
    conv_pool_image(images + i * pixels, taps, bias, g, pooled + i * g.pooled_values(),
                    winners + i * g.pooled_values());
  }
}

[[gnu::target("avx2,fma")]] void conv_pool_images_backward(std::int64_t begin, std::int64_t end,
                                                           const float* images,
                                                           const float* grad_pooled,
                                                           const std::uint8_t* winners,
                                                           const Geometry& g, float* sums) {
  const std::int64_t pixels = g.height * g.width;
  for (std::int64_t i = begin; i < end; ++i) {
    conv_pool_image_backward(images + i * pixels, grad_pooled + i * g.pooled_values(),
                             winners + i * g.pooled_values(), g, sums + i * g.gradient_sums());
  }
}

bool cpu_has_avx2_and_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

bool is_cpu_float(const at::Tensor& t) { return t.is_cpu() && t.scalar_type() == at::kFloat; }

bool fused_kernel_applies(const at::Tensor& images, const at::Tensor& weight,
                          const at::Tensor& bias) {
  if (!is_cpu_float(images) || images.dim() != 4 || images.size(1) != 1 ||
      !images.is_contiguous() || images.requires_grad()) {
    return false;
  }
  if (!is_cpu_float(weight) || weight.dim() != 4 || weight.size(0) != kChannels ||
      weight.size(1) != 1 || !bias.defined() || !is_cpu_float(bias) || bias.numel() != kChannels) {
    return false;
  }
  const std::int64_t out_height = images.size(2) - weight.size(2) + 1;
  const std::int64_t out_width = images.size(3) - weight.size(3) + 1;
  return out_height >= 2 && out_width >= 2 && out_height % 2 == 0 && out_width % 2 == 0 &&
         !autocast_enabled(c10::kCPU) && cpu_has_avx2_and_fma();
}

Geometry geometry_of(at::IntArrayRef image_sizes, at::IntArrayRef weight_sizes) {
  return {image_sizes[2], image_sizes[3], weight_sizes[2], weight_sizes[3]};
}

/// The rows of `per_image` (images x n) summed in row order, whatever the thread count.
at::Tensor sum_over_images(const at::Tensor& per_image) {
  at::Tensor total = at::zeros({per_image.size(1)}, per_image.options());
  float* sum = total.data_ptr<float>();
  const float* row = per_image.data_ptr<float>();
  for (std::int64_t image = 0; image < per_image.size(0); ++image, row += per_image.size(1)) {
    for (std::int64_t i = 0; i < per_image.size(1); ++i) sum[i] += row[i];
  }
  return total;
}

class InputConvPool : public torch::autograd::Function<InputConvPool> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& images,
                            const at::Tensor& weight, const at::Tensor& bias) {
    const Geometry g = geometry_of(images.sizes(), weight.sizes());
    const std::int64_t batch = images.size(0);
    const at::Tensor taps = weight.reshape({kChannels, g.taps()}).t().contiguous();
    const at::Tensor bias_values = bias.contiguous();
    at::Tensor pooled = at::empty({batch, kChannels, g.pooled_height(), g.pooled_width()},
                                  images.options().memory_format(at::MemoryFormat::ChannelsLast));
    at::Tensor winners = at::empty({batch, g.pooled_values()}, images.options().dtype(at::kByte));
    at::parallel_for(0, batch, 1, [&](std::int64_t begin, std::int64_t end) {
      conv_pool_images(begin, end, images.data_ptr<float>(), taps.data_ptr<float>(),
                       bias_values.data_ptr<float>(), g, pooled.data_ptr<float>(),
                       winners.data_ptr<std::uint8_t>());
    });
    context->save_for_backward({images, winners});
    context->saved_data["weight_sizes"] = weight.sizes();
    return pooled;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list saved = context->get_saved_variables();
    const at::Tensor& images = saved[0];
    const at::Tensor& winners = saved[1];
    const std::vector<std::int64_t> weight_sizes =
        context->saved_data["weight_sizes"].toIntVector();
    const Geometry g = geometry_of(images.sizes(), weight_sizes);
    const at::Tensor grad = grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor per_image = at::empty({images.size(0), g.gradient_sums()}, grad.options());
    at::parallel_for(0, images.size(0), 1, [&](std::int64_t begin, std::int64_t end) {
      conv_pool_images_backward(begin, end, images.data_ptr<float>(), grad.data_ptr<float>(),
                                winners.data_ptr<std::uint8_t>(), g, per_image.data_ptr<float>());
    });
    const at::Tensor sums = sum_over_images(per_image);
    const at::Tensor grad_weight = sums.narrow(0, 0, g.taps() * kChannels)
                                       .view({g.taps(), kChannels})
                                       .t()
                                       .reshape(weight_sizes);
    return {at::Tensor(), grad_weight, sums.narrow(0, g.taps() * kChannels, kChannels)};
  }
};

}  // namespace

at::Tensor input_conv_pool(const at::Tensor& images, const at::Tensor& weight,
                           const at::Tensor& bias) {
  if (!fused_kernel_applies(images, weight, bias)) {
    // Note [Channels-last convolutions] in cnn_net.cpp.
    return pooled_channels_last(at::conv2d(channels_last_input(images), weight, bias));
  }
  return InputConvPool::apply(images, weight, bias);
}

}  // namespace mnist_ddp::model
