// tests/unit/test_input_conv_pool.cpp — input_conv_pool against ATen's convolution, max-pool and
// ReLU computed in double: values, weight and bias gradients, ties over a constant background,
// NaN, the same bits at any thread count, the AVX2 kernel on any CPU with AVX2, and the inputs the
// fused kernel leaves to ATen.
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/utils.h>

#include "model/fast_cnn_layers.hpp"
#include "support/force_instruction_set.hpp"
#include "support/intra_op_threads.hpp"
#include "support/layer_grads.hpp"

namespace mnist_ddp::testing {
namespace {

using model::input_conv_pool;

/// input_conv_pool or another layer on images that need no gradient.
template <typename Function>
LayerGrads run(Function f, const at::Tensor& images, const at::Tensor& weight,
               const at::Tensor& bias, const at::Tensor& upstream) {
  return run_layer(f, images, weight, bias, upstream, /*input_grad=*/false);
}

/// The definition, in double: ATen's convolution, then max-pool and ReLU.
LayerGrads reference(const at::Tensor& images, const at::Tensor& weight, const at::Tensor& bias,
                     const at::Tensor& upstream) {
  const LayerGrads exact =
      run([](const at::Tensor& x, const at::Tensor& w,
             const at::Tensor& b) { return at::max_pool2d(at::conv2d(x, w, b), 2).relu(); },
          images.to(at::kDouble), weight.to(at::kDouble), bias.to(at::kDouble),
          upstream.to(at::kDouble));
  return {exact.values.to(at::kFloat), at::Tensor(), exact.weight_grad.to(at::kFloat),
          exact.bias_grad.to(at::kFloat), exact.node};
}

bool is_fused(const LayerGrads& outcome) {
  return outcome.node.find("InputConvPool") != std::string::npos;
}

/// MNIST-like images: a constant background (a blank pixel after normalisation) with random
/// strokes in the middle, so that most background windows tie.
at::Tensor digit_like_images(std::int64_t batch) {
  at::Tensor images = at::full({batch, 1, 28, 28}, -0.4242f);
  images.narrow(2, 6, 16).narrow(3, 8, 12).copy_(at::randn({batch, 1, 16, 12}) + 1.0);
  return images;
}

/// Checks ours against the double definition: the fused kernel ran (when `fused`), the map is
/// channels-last, values and gradients agree to float rounding.
void check_matches_definition(const at::Tensor& images, const at::Tensor& weight,
                              const at::Tensor& bias, bool fused) {
  const std::int64_t pooled_h = (images.size(2) - weight.size(2) + 1) / 2;
  const std::int64_t pooled_w = (images.size(3) - weight.size(3) + 1) / 2;
  const at::Tensor upstream = at::randn({images.size(0), weight.size(0), pooled_h, pooled_w});
  const LayerGrads ours = run(input_conv_pool, images, weight, bias, upstream);
  const LayerGrads exact = reference(images, weight, bias, upstream);
  CAPTURE(ours.node);
  CHECK(is_fused(ours) == fused);
  CHECK(ours.values.is_contiguous(at::MemoryFormat::ChannelsLast));
  check_close(ours, exact);
}

bool cpu_runs_the_kernel() { return model::instruction_set() >= model::InstructionSet::kAvx2; }

}  // namespace

TEST_SUITE("input_conv_pool") {
  TEST_CASE("fastcnn's conv1 on digit-like images: the definition's values and gradients") {
    if (!cpu_runs_the_kernel()) {
      WARN_MESSAGE(false, "this CPU lacks AVX2 or FMA: only the ATen path is checked");
    }
    torch::manual_seed(21);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    check_matches_definition(digit_like_images(6), weight, bias, cpu_runs_the_kernel());
    // Random images (no ties), a kernel that is not square, and channels-last weights.
    check_matches_definition(at::randn({3, 1, 12, 10}), at::randn({24, 1, 3, 5}), bias,
                             cpu_runs_the_kernel());
    check_matches_definition(digit_like_images(2),
                             weight.contiguous(at::MemoryFormat::ChannelsLast), bias,
                             cpu_runs_the_kernel());
  }

  TEST_CASE("a blank image ties every window; windows below zero pass no gradient") {
    torch::manual_seed(22);
    const at::Tensor blank = at::full({2, 1, 28, 28}, -0.4242f);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    // Some channels' constant output is positive (gradient), others' is clipped (none).
    const at::Tensor bias = at::linspace(-1, 1, 24);
    check_matches_definition(blank, weight, bias, cpu_runs_the_kernel());
  }

  TEST_CASE("a NaN pixel makes NaN where its patch reaches, as in ATen") {
    at::Tensor images = digit_like_images(2);
    images[1][0][10][10] = std::numeric_limits<float>::quiet_NaN();
    const at::Tensor weight = at::randn({24, 1, 5, 5});
    const at::Tensor bias = at::randn({24});
    const at::Tensor ours = input_conv_pool(images, weight, bias);
    const at::Tensor aten = at::max_pool2d(at::conv2d(images, weight, bias), 2).relu();
    CHECK(ours.isnan().any().item<bool>());
    CHECK(at::equal(ours.isnan(), aten.isnan()));
    CHECK(at::allclose(ours.nan_to_num(), aten.nan_to_num(), 1e-5, 1e-5));
  }

  TEST_CASE(
      "the AVX2 kernel, forced even where AVX-512 is: the definition's values and gradients") {
    if (!cpu_runs_the_kernel()) {
      WARN_MESSAGE(false, "this CPU lacks AVX2 or FMA: only the ATen path is checked");
    }
    torch::manual_seed(26);
    const at::Tensor images = digit_like_images(6);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    const at::Tensor upstream = at::randn({6, 24, 12, 12});
    const LayerGrads full = run(input_conv_pool, images, weight, bias, upstream);
    const ForceInstructionSet avx2(model::InstructionSet::kAvx2);
    forget_paths();
    const LayerGrads forced = run(input_conv_pool, images, weight, bias, upstream);
    CHECK(to_string(model::last_paths.input_conv_pool) ==
          (cpu_runs_the_kernel() ? "AVX2" : "ATen"));
    CHECK(to_string(model::last_paths.input_conv_pool_backward) ==
          (cpu_runs_the_kernel() ? "AVX2" : "not run"));
    check_close(forced, reference(images, weight, bias, upstream));
    // Bit-equal where the compiler fuses the AVX2 kernel's multiply-adds (GCC does), else close.
    CHECK(at::allclose(forced.values, full.values, 1e-6, 1e-6));
    CHECK(at::allclose(forced.weight_grad, full.weight_grad, 1e-5, 1e-5));
    check_matches_definition(at::randn({3, 1, 12, 10}), at::randn({24, 1, 3, 5}), bias,
                             cpu_runs_the_kernel());
  }

  TEST_CASE("both kernels: an odd pooled width takes the AVX2 one, with the same forward values") {
    // Note [The AVX-512 kernels]: 28 x 30 images pool to 12 x 13, which only the AVX2 kernel
    // takes; their first 28 columns are the 28 x 28 images, whose windows either kernel computes.
    torch::manual_seed(25);
    const at::Tensor wide = at::randn({3, 1, 28, 30});
    const at::Tensor square = wide.narrow(3, 0, 28).contiguous();
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    const at::Tensor from_square = input_conv_pool(square, weight, bias);
    const model::KernelPath square_path = model::last_paths.input_conv_pool;
    const at::Tensor from_wide = input_conv_pool(wide, weight, bias).narrow(3, 0, 12);
    const model::KernelPath wide_path = model::last_paths.input_conv_pool;
    if (model::instruction_set() == model::InstructionSet::kAvx512) {
      CHECK(to_string(square_path) == "AVX-512");
    }
    CHECK(to_string(wide_path) == (cpu_runs_the_kernel() ? "AVX2" : "ATen"));
    // Bit-equal where the compiler fuses the AVX2 kernel's multiply-adds (GCC does), else close.
    CHECK(at::allclose(from_square, from_wide, 1e-6, 1e-6));
    check_matches_definition(wide, weight, bias, cpu_runs_the_kernel());
  }

  TEST_CASE("the same bits on one thread and on two") {
    torch::manual_seed(23);
    const at::Tensor images = digit_like_images(7);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    const at::Tensor upstream = at::randn({7, 24, 12, 12});
    const auto on = [&](int threads) {
      return on_threads(threads,
                        [&] { return run(input_conv_pool, images, weight, bias, upstream); });
    };
    const LayerGrads one = on(1), two = on(2);
    CHECK(at::equal(one.values, two.values));
    check_same_gradients(one, two);
  }

  TEST_CASE("inputs the fused kernel does not take go through ATen, with the same results") {
    torch::manual_seed(24);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    // No instruction set the kernels use.
    {
      const ForceInstructionSet none(model::InstructionSet::kNone);
      check_matches_definition(digit_like_images(2), weight, bias, /*fused=*/false);
    }
    // 8 output channels: the kernel is compiled for 24.
    check_matches_definition(digit_like_images(2), at::randn({8, 1, 5, 5}), at::randn({8}),
                             /*fused=*/false);
    // An odd convolution output (27 - 5 + 1 = 23): the last row and column are dropped.
    check_matches_definition(at::randn({2, 1, 27, 27}), weight, bias, /*fused=*/false);
    // Images that need a gradient themselves.
    const at::Tensor images = digit_like_images(2).requires_grad_();
    CHECK(input_conv_pool(images, weight, bias).grad_fn()->name().find("InputConvPool") ==
          std::string::npos);
  }
}

}  // namespace mnist_ddp::testing
