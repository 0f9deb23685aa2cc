// lib/model/pooled_features.cpp — a fused 2x2 max-pool and ReLU, flattened or not, and backward.
#include "model/pooled_features.hpp"

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "model/pool_window.hpp"

namespace mnist_ddp::model {
namespace {

// Note [Fused pooling]
// ~~~~~~~~~~~~~~~~~~~~
// ATen's max-pool keeps a 64-bit index per output and zero-fills the input gradient before
// scattering, with separate passes for ReLU and flatten; this keeps a winner byte per output and
// writes each window's gradient once.

struct Shape {
  std::int64_t batch, channels, height, width;
  std::int64_t pooled_height() const { return height / 2; }
  std::int64_t pooled_width() const { return width / 2; }
  std::int64_t pooled_plane() const { return pooled_height() * pooled_width(); }
  std::int64_t features() const { return channels * pooled_plane(); }
};

Shape shape_of(const at::Tensor& x) { return {x.size(0), x.size(1), x.size(2), x.size(3)}; }

bool fused_kernel_applies(const at::Tensor& x) {
  return x.is_cpu() && x.dim() == 4 && x.size(2) % 2 == 0 && x.size(3) % 2 == 0 &&
         (at::isFloatingType(x.scalar_type()) && x.scalar_type() != at::kHalf) &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

/// One image's forward into `pooled` and `winners`, both pixels x channels.
template <typename scalar_t>
void pool_image(const scalar_t* input, scalar_t* pooled, std::uint8_t* winners, const Shape& s) {
  const std::int64_t row = s.width * s.channels;  // one input row, all channels
  for (std::int64_t oh = 0; oh < s.pooled_height(); ++oh) {
    for (std::int64_t ow = 0; ow < s.pooled_width(); ++ow) {
      const scalar_t* top = input + (2 * oh * s.width + 2 * ow) * s.channels;
      const std::int64_t pixel = (oh * s.pooled_width() + ow) * s.channels;
      pool_window(top, top + row, s.channels, pooled + pixel, winners + pixel);
    }
  }
}

/// One image's backward: writes every input position, the gradient or zero.
template <typename scalar_t>
void unpool_image(const scalar_t* grad_pooled, const std::uint8_t* winners, scalar_t* grad_in,
                  const Shape& s) {
  const std::int64_t row = s.width * s.channels;
  for (std::int64_t oh = 0; oh < s.pooled_height(); ++oh) {
    for (std::int64_t ow = 0; ow < s.pooled_width(); ++ow) {
      scalar_t* top = grad_in + (2 * oh * s.width + 2 * ow) * s.channels;
      const std::int64_t pixel = (oh * s.pooled_width() + ow) * s.channels;
      unpool_window(grad_pooled + pixel, winners + pixel, s.channels, top, top + row);
    }
  }
}

/// Pixels x channels to C, H, W order (`back`: the other way); pooling runs along channels.
template <typename scalar_t>
void transpose_image(const scalar_t* from, scalar_t* to, const Shape& s, bool back) {
  for (std::int64_t c = 0; c < s.channels; ++c) {
    for (std::int64_t pixel = 0; pixel < s.pooled_plane(); ++pixel) {
      const std::int64_t features = c * s.pooled_plane() + pixel;
      const std::int64_t pooled = pixel * s.channels + c;
      if (back) {
        to[pooled] = from[features];
      } else {
        to[features] = from[pooled];
      }
    }
  }
}

/// kernel(image, scratch) for every image in parallel; scratch is one image's pooled values.
template <typename scalar_t, typename Kernel>
void for_each_image(const Shape& s, bool scratch_needed, const Kernel& kernel) {
  at::parallel_for(0, s.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<scalar_t> scratch(scratch_needed ? static_cast<std::size_t>(s.features()) : 0);
    for (std::int64_t image = begin; image < end; ++image) kernel(image, scratch.data());
  });
}

/// The pooled values, as flattened C, H, W `features` (for a linear layer) or a channels-last map
/// (for a convolution), and the winner bytes (pixels x channels).
std::pair<at::Tensor, at::Tensor> pool(const at::Tensor& x, bool features) {
  const Shape s = shape_of(x);
  at::Tensor result = features
                          ? at::empty({s.batch, s.features()}, x.options())
                          : at::empty({s.batch, s.channels, s.pooled_height(), s.pooled_width()},
                                      x.options().memory_format(at::MemoryFormat::ChannelsLast));
  at::Tensor winners = at::empty({s.batch, s.features()}, x.options().dtype(at::kByte));
  AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, x.scalar_type(), "fused_pooling", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    std::uint8_t* won = winners.data_ptr<std::uint8_t>();
    for_each_image<scalar_t>(
        s, /*scratch_needed=*/features, [&](std::int64_t image, scalar_t* scratch) {
          scalar_t* image_out = out + image * s.features();
          pool_image(in + image * s.height * s.width * s.channels, features ? scratch : image_out,
                     won + image * s.features(), s);
          if (features) transpose_image(scratch, image_out, s, /*back=*/false);
        });
  });
  return {result, winners};
}

class FusedPooling : public torch::autograd::Function<FusedPooling> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                            bool features) {
    auto [result, winners] = pool(x, features);
    context->save_for_backward({winners});
    context->saved_data["sizes"] = x.sizes();
    context->saved_data["features"] = features;
    return result;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor winners = context->get_saved_variables()[0];
    const std::vector<std::int64_t> sizes = context->saved_data["sizes"].toIntVector();
    const bool features = context->saved_data["features"].toBool();
    const at::Tensor grad =
        features ? grads[0].contiguous() : grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor grad_in =
        at::empty(sizes, grad.options().memory_format(at::MemoryFormat::ChannelsLast));
    const Shape s = shape_of(grad_in);
    AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, grad_in.scalar_type(), "fused_pooling", [&] {
      const scalar_t* grad_out = grad.data_ptr<scalar_t>();
      const std::uint8_t* won = winners.data_ptr<std::uint8_t>();
      scalar_t* out = grad_in.data_ptr<scalar_t>();
      for_each_image<scalar_t>(
          s, /*scratch_needed=*/features, [&](std::int64_t image, scalar_t* scratch) {
            const scalar_t* image_grad = grad_out + image * s.features();
            if (features) transpose_image(image_grad, scratch, s, /*back=*/true);
            unpool_image(features ? scratch : image_grad, won + image * s.features(),
                         out + image * s.height * s.width * s.channels, s);
          });
    });
    return {grad_in, at::Tensor()};
  }
};

}  // namespace

at::Tensor pooled_features(const at::Tensor& x) {
  if (!fused_kernel_applies(x)) return at::max_pool2d(x, 2).relu_().flatten(1);
  return FusedPooling::apply(x, /*features=*/true);
}

std::pair<at::Tensor, at::Tensor> pooled_features_and_winners(const at::Tensor& x) {
  TORCH_CHECK(fused_kernel_applies(x), "pooled_features_and_winners: a channels-last CPU map");
  return pool(x, /*features=*/true);
}

at::Tensor pooled_channels_last(const at::Tensor& x) {
  if (!fused_kernel_applies(x)) return at::max_pool2d(x, 2).relu_();
  return FusedPooling::apply(x, /*features=*/false);
}

}  // namespace mnist_ddp::model
