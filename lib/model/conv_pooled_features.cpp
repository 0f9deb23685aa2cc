// lib/model/conv_pooled_features.cpp — conv2d then pooled_features; backward through the winners.
#include "model/fast_cnn_layers.hpp"

#include <algorithm>
#include <cstdint>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "model/cpu_kernels.hpp"
#include "model/pooled_features.hpp"

namespace mnist_ddp::model {
namespace {

// Note [Backward through the pooling's winners]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// After a 2x2 max-pool only each window's winning output has a gradient, so the backward goes
// through it alone: a quarter of oneDNN's multiply-adds, no full-size output gradient. Groups of
// kImagesPerSum images are summed in order: the same bits at any thread count. Where
// conv_pooled_features_path declines (no AVX-512F, other shapes), ATen and pooled_features.

/// fastcnn's conv2 inputs: one 16-lane and one 8-lane register per pixel.
constexpr std::int64_t kInChannels = fast_cnn::kConv1Outputs;
constexpr std::int64_t kKernelSide = fast_cnn::kConv2Kernel;
constexpr std::int64_t kTaps = kKernelSide * kKernelSide;
constexpr std::int64_t kWeightPerOutput = kTaps * kInChannels;
/// Images per partial weight-gradient sum; fixed, so sums do not depend on threads.
constexpr std::int64_t kImagesPerSum = 8;

/// One input pixel's 24 channels: 16 lanes, then 8.
struct PixelLanes {
  __m512 low;
  __m256 high;
};

[[gnu::target("avx512f,fma"), gnu::always_inline]] inline PixelLanes load_pixel(const float* p) {
  return {_mm512_loadu_ps(p), _mm256_loadu_ps(p + 16)};
}

[[gnu::target("avx512f,fma"), gnu::always_inline]] inline void store_pixel(float* p,
                                                                           const PixelLanes& v) {
  _mm512_storeu_ps(p, v.low);
  _mm256_storeu_ps(p + 16, v.high);
}

/// v + g * p, lane by lane.
[[gnu::target("avx512f,fma"), gnu::always_inline]] inline PixelLanes add_scaled(
    const PixelLanes& v, float g, const PixelLanes& p) {
  return {_mm512_fmadd_ps(_mm512_set1_ps(g), p.low, v.low),
          _mm256_fmadd_ps(_mm256_set1_ps(g), p.high, v.high)};
}

/// Adds one image's weight and bias gradients to `sums` (ConvGeometry::gradient_sums); a clipped
/// window adds a zero gradient rather than branching on data.
[[gnu::target("avx512f,fma")]] void add_weight_gradients(const float* image,
                                                         const float* grad_features,
                                                         const std::uint8_t* winners,
                                                         const ConvGeometry& g, float* sums) {
  for (std::int64_t c = 0; c < g.outputs; ++c) {
    float* weight = sums + c * kWeightPerOutput;
    PixelLanes taps[kTaps];
    for (std::int64_t t = 0; t < kTaps; ++t) taps[t] = load_pixel(weight + t * kInChannels);
    float bias = 0;
    for (std::int64_t py = 0, w = 0; py < g.pooled_height(); ++py) {
      for (std::int64_t px = 0; px < g.pooled_width(); ++px, ++w) {
        const std::uint8_t winner = winners[w * g.outputs + c];
        const float grad = kept_if(winner != kClipped, grad_features[c * g.windows() + w]);
        const float* patch =
            image + (2 * py * g.width + 2 * px + g.winner_offset(winner)) * kInChannels;
        for (std::int64_t t = 0; t < kTaps; ++t) {
          const std::int64_t at = ((t / kKernelSide) * g.width + t % kKernelSide) * kInChannels;
          taps[t] = add_scaled(taps[t], grad, load_pixel(patch + at));
        }
        bias += grad;
      }
    }
    for (std::int64_t t = 0; t < kTaps; ++t) store_pixel(weight + t * kInChannels, taps[t]);
    sums[g.outputs * kWeightPerOutput + c] += bias;
  }
}

/// One image's input gradient. Per window, the channels that share a winner share its patch: their
/// scaled weights are summed in registers, then added to the patch once.
[[gnu::target("avx512f,fma")]] void input_gradient_image(const float* weight,
                                                         const float* grad_features,
                                                         const std::uint8_t* winners,
                                                         const ConvGeometry& g, float* grad_image) {
  std::fill(grad_image, grad_image + g.image_floats(), 0.0f);
  std::int64_t channels_of[kClipped + 1][fast_cnn::kMaxConv2Outputs];
  for (std::int64_t w = 0; w < g.windows(); ++w) {
    std::int64_t count[kClipped + 1] = {};
    for (std::int64_t c = 0; c < g.outputs; ++c) {
      const std::uint8_t winner = winners[w * g.outputs + c];
      channels_of[winner][count[winner]++] = c;
    }
    const std::int64_t top_left = 2 * (w / g.pooled_width()) * g.width + 2 * (w % g.pooled_width());
    for (std::uint8_t winner = 0; winner < kClipped; ++winner) {
      if (count[winner] == 0) continue;
      PixelLanes sum[kTaps];
      for (PixelLanes& tap : sum) tap = {_mm512_setzero_ps(), _mm256_setzero_ps()};
      for (std::int64_t k = 0; k < count[winner]; ++k) {
        const std::int64_t c = channels_of[winner][k];
        const float grad = grad_features[c * g.windows() + w];
        for (std::int64_t t = 0; t < kTaps; ++t) {
          sum[t] =
              add_scaled(sum[t], grad, load_pixel(weight + c * kWeightPerOutput + t * kInChannels));
        }
      }
      float* patch = grad_image + (top_left + g.winner_offset(winner)) * kInChannels;
      for (std::int64_t t = 0; t < kTaps; ++t) {
        float* at = patch + ((t / kKernelSide) * g.width + t % kKernelSide) * kInChannels;
        const PixelLanes old = load_pixel(at);
        store_pixel(at, {_mm512_add_ps(old.low, sum[t].low), _mm256_add_ps(old.high, sum[t].high)});
      }
    }
  }
}

class ConvPooledFeatures : public torch::autograd::Function<ConvPooledFeatures> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                            const at::Tensor& weight, const at::Tensor& bias) {
    // Note [The fused kernels under bf16]
    const c10::impl::ExcludeDispatchKeyGuard float32(c10::DispatchKey::AutocastCPU);
    auto [features, winners] = pooled_features_and_winners(at::conv2d(x, weight, bias));
    context->save_for_backward({x, weight, winners});
    return features;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list saved = context->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &winners = saved[2];
    const ConvGeometry g(x.sizes(), weight.sizes());
    last_paths.conv_pooled_features_backward = KernelPath::kAvx512;
    const std::int64_t batch = x.size(0);
    const at::Tensor grad = grads[0].contiguous();
    const bool input_grad_needed = context->needs_input_grad(0);
    at::Tensor grad_x =
        input_grad_needed ? at::empty_like(x, at::MemoryFormat::ChannelsLast) : at::Tensor();
    const std::int64_t groups = (batch + kImagesPerSum - 1) / kImagesPerSum;
    at::Tensor per_group = at::empty({groups, g.gradient_sums()}, grad.options());
    const float* grad_of = grad.data_ptr<float>();
    const std::uint8_t* winners_of = winners.data_ptr<std::uint8_t>();
    const std::int64_t per_image = g.outputs * g.windows();
    at::parallel_for(0, groups, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t group = begin; group < end; ++group) {
        float* sums = per_group.data_ptr<float>() + group * g.gradient_sums();
        std::fill(sums, sums + g.gradient_sums(), 0.0f);
        const std::int64_t first = group * kImagesPerSum;
        for (std::int64_t i = first; i < std::min(first + kImagesPerSum, batch); ++i) {
          add_weight_gradients(x.data_ptr<float>() + i * g.image_floats(), grad_of + i * per_image,
                               winners_of + i * per_image, g, sums);
          if (!input_grad_needed) continue;
          input_gradient_image(weight.data_ptr<float>(), grad_of + i * per_image,
                               winners_of + i * per_image, g,
                               grad_x.data_ptr<float>() + i * g.image_floats());
        }
      }
    });
    const at::Tensor sums = sum_rows_in_order(per_group);
    const std::int64_t weight_floats = g.outputs * kWeightPerOutput;
    // The sums are laid out as the channels-last weight: output, row, column, input channel.
    const at::Tensor grad_weight = sums.narrow(0, 0, weight_floats)
                                       .view({g.outputs, kKernelSide, kKernelSide, kInChannels})
                                       .permute({0, 3, 1, 2});
    return {grad_x, grad_weight, sums.narrow(0, weight_floats, g.outputs)};
  }
};

}  // namespace

at::Tensor conv_pooled_features(const at::Tensor& x, const at::Tensor& weight,
                                const at::Tensor& bias) {
  const KernelPath path = conv_pooled_features_path(x, weight, bias);
  last_paths.conv_pooled_features = path;
  if (path == KernelPath::kAten) return pooled_features(at::conv2d(x, weight, bias));
  return ConvPooledFeatures::apply(x, weight, bias);
}

}  // namespace mnist_ddp::model
