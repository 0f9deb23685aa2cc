// lib/model/cpu_kernels.hpp — provides: fused-kernel dispatch, path record, sum_rows_in_order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <ATen/ATen.h>

// GCC 12's intrinsics read a deliberately undefined register (its bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "model/fast_cnn_layers.hpp"

namespace mnist_ddp::model {

/// What the fused kernels may use, each level with the ones before; kAvx2 is AVX2 and FMA.
enum class InstructionSet { kNone, kAvx2, kAvx512 };

/// The most that instruction_set() answers: tests lower it to run the AVX2 kernels on any CPU.
inline std::atomic<InstructionSet> instruction_set_cap{InstructionSet::kAvx512};

/// This CPU's level, probed once, at most instruction_set_cap.
inline InstructionSet instruction_set() {
  static const InstructionSet probed = [] {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
      return InstructionSet::kNone;
    }
    return __builtin_cpu_supports("avx512f") ? InstructionSet::kAvx512 : InstructionSet::kAvx2;
  }();
  return std::min(probed, instruction_set_cap.load(std::memory_order_relaxed));
}

// Note [The fused kernels under bf16]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Under --precision bf16 the fused kernels still take fastcnn's convolutions, in float32, as
// autocast leaves operators it does not list; a bf16 kernel would be slower (bench/bf16.md).

/// What computes a fused layer's pass: nothing yet, ATen's operators, or a kernel for a level.
enum class KernelPath { kNotRun, kAten, kAvx2, kAvx512 };

/// Float32 CPU tensors, and a convolution output with even sides of at least 2.
inline bool fusable(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const auto is_cpu_float = [](const at::Tensor& t) {
    return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat;
  };
  const auto poolable = [](std::int64_t side) { return side >= 2 && side % 2 == 0; };
  return is_cpu_float(x) && is_cpu_float(weight) && is_cpu_float(bias) && x.dim() == 4 &&
         weight.dim() == 4 && x.size(1) == weight.size(1) && bias.numel() == weight.size(0) &&
         poolable(x.size(2) - weight.size(2) + 1) && poolable(x.size(3) - weight.size(3) + 1);
}

/// The path of input_conv_pool's arguments (Note [The input convolution pools as it goes]).
inline KernelPath input_conv_pool_path(const at::Tensor& images, const at::Tensor& weight,
                                       const at::Tensor& bias) {
  const InstructionSet level = instruction_set();
  if (level == InstructionSet::kNone || !fusable(images, weight, bias) || images.size(1) != 1 ||
      !images.is_contiguous() || images.requires_grad() ||
      weight.size(0) != fast_cnn::kConv1Outputs) {
    return KernelPath::kAten;
  }
  // The shapes Note [The AVX-512 kernels] takes.
  const bool avx512 = level == InstructionSet::kAvx512 &&
                      weight.size(3) == fast_cnn::kConv1Kernel &&
                      pooled_side(images.size(3), weight.size(3)) % 2 == 0;
  return avx512 ? KernelPath::kAvx512 : KernelPath::kAvx2;
}

/// The path of conv_pooled_features' arguments (Note [Backward through the pooling's winners]).
inline KernelPath conv_pooled_features_path(const at::Tensor& x, const at::Tensor& weight,
                                            const at::Tensor& bias) {
  const bool fits = fusable(x, weight, bias) && x.size(1) == fast_cnn::kConv1Outputs &&
                    weight.size(2) == fast_cnn::kConv2Kernel &&
                    weight.size(3) == fast_cnn::kConv2Kernel &&
                    weight.size(0) <= fast_cnn::kMaxConv2Outputs &&
                    x.is_contiguous(at::MemoryFormat::ChannelsLast) &&
                    weight.is_contiguous(at::MemoryFormat::ChannelsLast);
  return fits && instruction_set() == InstructionSet::kAvx512 ? KernelPath::kAvx512
                                                              : KernelPath::kAten;
}

/// The path of each fused layer's last forward and backward, from any thread: a record for tests.
struct LastPaths {
  std::atomic<KernelPath> input_conv_pool, input_conv_pool_backward, conv_pooled_features,
      conv_pooled_features_backward;
};
inline LastPaths last_paths;

/// The rows of contiguous float (n x m) `rows` summed in order: the same bits at any thread count.
inline at::Tensor sum_rows_in_order(const at::Tensor& rows) {
  // A lambda of its own: GCC vectorizes the loop only with restrict parameters.
  const auto add_row = [](float* __restrict sum, const float* __restrict row, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) sum[i] += row[i];
  };
  at::Tensor total = at::zeros({rows.size(1)}, rows.options());
  for (std::int64_t r = 0; r < rows.size(0); ++r) {
    add_row(total.data_ptr<float>(), rows.data_ptr<float>() + r * rows.size(1), rows.size(1));
  }
  return total;
}

}  // namespace mnist_ddp::model
