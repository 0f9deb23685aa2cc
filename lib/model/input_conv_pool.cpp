// lib/model/input_conv_pool.cpp — the first convolution pooled as it goes, with its backward.
#include "model/fast_cnn_layers.hpp"

#include <array>
#include <cstdint>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "model/channels_last.hpp"
#include "model/cpu_kernels.hpp"
#include "model/pooled_features.hpp"

namespace mnist_ddp::model {
namespace {

// Note [The input convolution pools as it goes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A one-channel convolution is too little work per pixel for oneDNN: this kernel pools each 2x2
// window's outputs in registers and sends its gradient straight into the weight's, so the
// full-size map never exists. Sums run in tap order, so values differ from oneDNN's in the last
// bits; outputs tie only on equal patches, whose gradient is the same whichever wins. The weight
// gradient is summed per image, then over images in order: the same bits at any thread count.
// -ffp-contract=fast makes each multiply-add one FMA. Where input_conv_pool_path declines, ATen.

/// fastcnn's conv1: a window's 4 x 24 outputs stay in registers only with a compile-time count.
constexpr std::int64_t kChannels = fast_cnn::kConv1Outputs;

/// The four input pixels tap (ky, kx) multiplies in pooled pixel (py, px)'s window, row order.
[[gnu::always_inline]] inline std::array<float, 4> window_inputs(const float* image,
                                                                 const ConvGeometry& g,
                                                                 std::int64_t py, std::int64_t px,
                                                                 std::int64_t ky, std::int64_t kx) {
  const float* top_left = image + (2 * py + ky) * g.width + 2 * px + kx;
  return {top_left[0], top_left[1], top_left[g.width], top_left[g.width + 1]};
}

/// One image's pooled map (pixels x channels) and winners; `taps` is (KH * KW) x channels.
[[gnu::always_inline]] inline void conv_pool_image(const float* __restrict image,
                                                   const float* __restrict taps,
                                                   const float* __restrict bias,
                                                   const ConvGeometry& g, float* __restrict pooled,
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
          const std::array<float, 4> in = window_inputs(image, g, py, px, ky, kx);
          for (int q = 0; q < 4; ++q) {
            for (std::int64_t c = 0; c < kChannels; ++c) window[q][c] += tap[c] * in[q];
          }
        }
      }
      const std::int64_t at = (py * g.pooled_width() + px) * kChannels;
      pool_window(window[0], window[2], kChannels, pooled + at, winners + at);
    }
  }
}

/// One image's gradient sums (ConvGeometry::gradient_sums) from the pooled map's gradient.
[[gnu::always_inline]] inline void conv_pool_image_backward(const float* __restrict image,
                                                            const float* __restrict grad_pooled,
                                                            const std::uint8_t* __restrict winners,
                                                            const ConvGeometry& g,
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
          const std::array<float, 4> in = window_inputs(image, g, py, px, ky, kx);
          for (std::int64_t c = 0; c < kChannels; ++c) {
            grad_tap[c] += window[0][c] * in[0] + window[1][c] * in[1] + window[2][c] * in[2] +
                           window[3][c] * in[3];
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
                                                  const float* bias, const ConvGeometry& g,
                                                  float* pooled, std::uint8_t* winners) {
  for (std::int64_t i = begin; i < end; ++i) {
    conv_pool_image(images + i * g.image_floats(), taps, bias, g, pooled + i * g.pooled_values(),
                    winners + i * g.pooled_values());
  }
}

[[gnu::target("avx2,fma")]] void conv_pool_images_backward(std::int64_t begin, std::int64_t end,
                                                           const float* images,
                                                           const float* grad_pooled,
                                                           const std::uint8_t* winners,
                                                           const ConvGeometry& g, float* sums) {
  for (std::int64_t i = begin; i < end; ++i) {
    conv_pool_image_backward(images + i * g.image_floats(), grad_pooled + i * g.pooled_values(),
                             winners + i * g.pooled_values(), g, sums + i * g.gradient_sums());
  }
}

// Note [The AVX-512 kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// 24 channels are one and a half 16-lane registers, which the loops above, vectorized, waste.
// - Forward (WindowLanes): two outputs' channels 16-23 share a register; sums run in the order
//   above, the same bits where the compiler fuses those multiply-adds too (GCC does, clang not).
// - Backward: each channel's weight gradient takes only the input pixel its winner saw, picked by
//   a permute from a window pair's 2 x 4 pixels: a quarter of the multiply-adds.
// - Only AVX-512F, a kKernelWidth-wide kernel and an even pooled width; else the kernels above.

/// The kernel width whose backward keeps its row's taps in registers (fastcnn's conv1's).
constexpr std::int64_t kKernelWidth = fast_cnn::kConv1Kernel;

using Lanes = __m512;  // 16 floats

/// A window pair's 48 lanes to 24 channel sums: the left window's plus the right's.
[[gnu::target("avx512f"), gnu::always_inline]] inline void fold_pair(const Lanes (&pair)[3],
                                                                     float* out) {
  alignas(64) float lanes[2 * kChannels];
  for (int r = 0; r < 3; ++r) _mm512_store_ps(lanes + 16 * r, pair[r]);
  for (std::int64_t c = 0; c < kChannels; ++c) out[c] = lanes[c] + lanes[kChannels + c];
}

/// A window's 4 outputs x 24 channels: each output's channels 0-15, then channels 16-23 of the
/// top two outputs and of the bottom two (the second output's in lanes 8-15).
struct WindowLanes {
  Lanes low[4], high[2];
};

/// The floats of one tap in wide_lanes' order.
constexpr std::int64_t kWideTap = 32;

/// Per tap: channels 0-15, then channels 16-23 twice (WindowLanes' order).
at::Tensor wide_lanes(const at::Tensor& per_channel) {
  return at::cat({per_channel, per_channel.narrow(-1, 16, 8)}, -1).contiguous();
}

[[gnu::target("avx512f"), gnu::always_inline]] inline void add_tap(WindowLanes& w, const float* tap,
                                                                   const std::array<float, 4>& in) {
  const __mmask16 second_output = 0xFF00;
  const Lanes low = _mm512_loadu_ps(tap), high = _mm512_loadu_ps(tap + 16);
  Lanes input[4];
  for (int q = 0; q < 4; ++q) {
    input[q] = _mm512_set1_ps(in[q]);
    w.low[q] = _mm512_fmadd_ps(low, input[q], w.low[q]);
  }
  for (int h = 0; h < 2; ++h) {
    const Lanes pair = _mm512_mask_mov_ps(input[2 * h], second_output, input[2 * h + 1]);
    w.high[h] = _mm512_fmadd_ps(high, pair, w.high[h]);
  }
}

/// pool_window on lanes: the first `kLanes` (16 or 8) channels' maximum after the ReLU, and winner.
template <int kLanes>
[[gnu::target("avx512f"), gnu::always_inline]] inline void pool_lanes(const Lanes (&output)[4],
                                                                      float* best_of,
                                                                      std::uint8_t* winner_of) {
  Lanes best = output[0];
  __m512i winner = _mm512_setzero_si512();
  for (int k = 1; k < 4; ++k) {
    const __mmask16 wins = _mm512_cmp_ps_mask(output[k], best, _CMP_GT_OQ) |
                           _mm512_cmp_ps_mask(output[k], output[k], _CMP_UNORD_Q);
    best = _mm512_mask_mov_ps(best, wins, output[k]);
    winner = _mm512_mask_mov_epi32(winner, wins, _mm512_set1_epi32(k));
  }
  const __mmask16 clipped = _mm512_cmp_ps_mask(best, _mm512_setzero_ps(), _CMP_LE_OQ);
  const __m128i winner_bytes =
      _mm512_cvtepi32_epi8(_mm512_mask_mov_epi32(winner, clipped, _mm512_set1_epi32(kClipped)));
  _mm512_mask_storeu_ps(best_of, (1 << kLanes) - 1, _mm512_maskz_mov_ps(~clipped, best));
  if constexpr (kLanes == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(winner_of), winner_bytes);
  } else {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(winner_of), winner_bytes);
  }
}

[[gnu::target("avx512f"), gnu::always_inline]] inline void pool_window_lanes(
    const WindowLanes& w, float* best_of, std::uint8_t* winner_of) {
  pool_lanes<16>(w.low, best_of, winner_of);
  // The second output's channels 16-23, from lanes 8-15 down to 0-7.
  constexpr int kUpperHalf = _MM_SHUFFLE(3, 2, 3, 2);
  const Lanes high[4] = {w.high[0], _mm512_shuffle_f32x4(w.high[0], w.high[0], kUpperHalf),
                         w.high[1], _mm512_shuffle_f32x4(w.high[1], w.high[1], kUpperHalf)};
  pool_lanes<8>(high, best_of + 16, winner_of + 16);
}

[[gnu::target("avx512f")]] void conv_pool_images_avx512(std::int64_t begin, std::int64_t end,
                                                        const float* images, const float* taps_wide,
                                                        const float* bias_wide,
                                                        const ConvGeometry& g, float* pooled,
                                                        std::uint8_t* winners) {
  const Lanes bias_low = _mm512_loadu_ps(bias_wide), bias_high = _mm512_loadu_ps(bias_wide + 16);
  for (std::int64_t i = begin; i < end; ++i) {
    const float* image = images + i * g.image_floats();
    for (std::int64_t py = 0; py < g.pooled_height(); ++py) {
      // Two windows side by side: twelve independent sums keep both FMA pipes busy.
      for (std::int64_t px = 0; px < g.pooled_width(); px += 2) {
        WindowLanes pair[2];
        for (WindowLanes& w : pair) {
          for (Lanes& l : w.low) l = bias_low;
          for (Lanes& l : w.high) l = bias_high;
        }
        for (std::int64_t ky = 0; ky < g.kernel_height; ++ky) {
          for (std::int64_t kx = 0; kx < g.kernel_width; ++kx) {
            const float* tap = taps_wide + (ky * g.kernel_width + kx) * kWideTap;
            for (int side = 0; side < 2; ++side) {
              add_tap(pair[side], tap, window_inputs(image, g, py, px + side, ky, kx));
            }
          }
        }
        for (int side = 0; side < 2; ++side) {
          const std::int64_t at =
              i * g.pooled_values() + (py * g.pooled_width() + px + side) * kChannels;
          pool_window_lanes(pair[side], pooled + at, winners + at);
        }
      }
    }
  }
}

[[gnu::target("avx512f")]] void conv_pool_images_backward_avx512(
    std::int64_t begin, std::int64_t end, const float* images, const float* grad_pooled,
    const std::uint8_t* winners, const ConvGeometry& g, float* sums) {
  // Lane l of a window pair's 48 is channel l % 24 of the left (l < 24) or right window.
  const __m512i right_window[3] = {_mm512_setzero_si512(), _mm512_maskz_set1_epi32(0xFF00, 2),
                                   _mm512_set1_epi32(2)};
  for (std::int64_t i = begin; i < end; ++i) {
    const float* image = images + i * g.image_floats();
    const float* grad = grad_pooled + i * g.pooled_values();
    const std::uint8_t* won = winners + i * g.pooled_values();
    float* image_sums = sums + i * g.gradient_sums();
    Lanes bias[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (std::int64_t ky = 0; ky < g.kernel_height; ++ky) {
      Lanes taps[kKernelWidth][3];
      for (auto& tap : taps) tap[0] = tap[1] = tap[2] = _mm512_setzero_ps();
      for (std::int64_t py = 0; py < g.pooled_height(); ++py) {
        for (std::int64_t px = 0; px < g.pooled_width(); px += 2) {
          const std::int64_t at = (py * g.pooled_width() + px) * kChannels;
          // The winner's gradient (zero where clipped) and its input among the pair's 2 x 4 pixels.
          Lanes grad_of[3];
          __m512i source[3];
          for (int r = 0; r < 3; ++r) {
            const __m512i winner = _mm512_cvtepu8_epi32(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(won + at + 16 * r)));
            const __mmask16 kept = _mm512_cmpneq_epi32_mask(winner, _mm512_set1_epi32(kClipped));
            grad_of[r] = _mm512_maskz_loadu_ps(kept, grad + at + 16 * r);
            const __m512i column = _mm512_and_si512(winner, _mm512_set1_epi32(1));
            const __m512i row = _mm512_slli_epi32(_mm512_srli_epi32(winner, 1), 2);
            source[r] = _mm512_add_epi32(_mm512_add_epi32(column, row), right_window[r]);
            if (ky == 0) bias[r] = _mm512_add_ps(bias[r], grad_of[r]);
          }
          const float* top_left = image + (2 * py + ky) * g.width + 2 * px;
          for (std::int64_t kx = 0; kx < kKernelWidth; ++kx) {
            const Lanes pixels = _mm512_zextps256_ps512(
                _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(top_left + kx)),
                                     _mm_loadu_ps(top_left + g.width + kx), 1));
            for (int r = 0; r < 3; ++r) {
              taps[kx][r] = _mm512_fmadd_ps(grad_of[r], _mm512_permutexvar_ps(source[r], pixels),
                                            taps[kx][r]);
            }
          }
        }
      }
      for (std::int64_t kx = 0; kx < kKernelWidth; ++kx) {
        fold_pair(taps[kx], image_sums + (ky * kKernelWidth + kx) * kChannels);
      }
    }
    fold_pair(bias, image_sums + g.taps() * kChannels);
  }
}

class InputConvPool : public torch::autograd::Function<InputConvPool> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& images,
                            const at::Tensor& weight, const at::Tensor& bias, KernelPath path) {
    const ConvGeometry g(images.sizes(), weight.sizes());
    const std::int64_t batch = images.size(0);
    const at::Tensor taps = weight.reshape({kChannels, g.taps()}).t().contiguous();
    at::Tensor pooled = at::empty({batch, kChannels, g.pooled_height(), g.pooled_width()},
                                  images.options().memory_format(at::MemoryFormat::ChannelsLast));
    at::Tensor winners = at::empty({batch, g.pooled_values()}, images.options().dtype(at::kByte));
    const bool avx512 = path == KernelPath::kAvx512;
    const at::Tensor taps_used = avx512 ? wide_lanes(taps) : taps;
    const at::Tensor bias_used = avx512 ? wide_lanes(bias) : bias.contiguous();
    at::parallel_for(0, batch, 1, [&](std::int64_t begin, std::int64_t end) {
      (avx512 ? conv_pool_images_avx512 : conv_pool_images)(
          begin, end, images.data_ptr<float>(), taps_used.data_ptr<float>(),
          bias_used.data_ptr<float>(), g, pooled.data_ptr<float>(),
          winners.data_ptr<std::uint8_t>());
    });
    context->save_for_backward({images, winners});
    context->saved_data["weight_sizes"] = weight.sizes();
    context->saved_data["path"] = static_cast<std::int64_t>(path);
    return pooled;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list saved = context->get_saved_variables();
    const at::Tensor &images = saved[0], &winners = saved[1];
    const std::vector<std::int64_t> weight_sizes =
        context->saved_data["weight_sizes"].toIntVector();
    const ConvGeometry g(images.sizes(), weight_sizes);
    const auto path = static_cast<KernelPath>(context->saved_data["path"].toInt());
    last_paths.input_conv_pool_backward = path;
    const at::Tensor grad = grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor per_image = at::empty({images.size(0), g.gradient_sums()}, grad.options());
    at::parallel_for(0, images.size(0), 1, [&](std::int64_t begin, std::int64_t end) {
      (path == KernelPath::kAvx512 ? conv_pool_images_backward_avx512 : conv_pool_images_backward)(
          begin, end, images.data_ptr<float>(), grad.data_ptr<float>(),
          winners.data_ptr<std::uint8_t>(), g, per_image.data_ptr<float>());
    });
    const at::Tensor sums = sum_rows_in_order(per_image);
    const at::Tensor grad_weight = sums.narrow(0, 0, g.taps() * kChannels)
                                       .view({g.taps(), kChannels})
                                       .t()
                                       .reshape(weight_sizes);
    return {at::Tensor(), grad_weight, sums.narrow(0, g.taps() * kChannels, kChannels),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor input_conv_pool(const at::Tensor& images, const at::Tensor& weight,
                           const at::Tensor& bias) {
  const KernelPath path = input_conv_pool_path(images, weight, bias);
  last_paths.input_conv_pool = path;
  if (path == KernelPath::kAten) {
    // Note [Channels-last convolutions] in cnn_net.cpp.
    return pooled_channels_last(at::conv2d(channels_last_input(images), weight, bias));
  }
  return InputConvPool::apply(images, weight, bias, path);
}

}  // namespace mnist_ddp::model
