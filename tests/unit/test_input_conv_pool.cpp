// tests/unit/test_input_conv_pool.cpp — input_conv_pool against ATen's convolution, max-pool and
// ReLU computed in double: values, weight and bias gradients, ties over a constant background,
// NaN, the same bits at any thread count, and the inputs the fused kernel leaves to ATen.
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <doctest/doctest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/utils.h>

#include "model/input_conv_pool.hpp"

namespace mnist_ddp::testing {
namespace {

using model::input_conv_pool;

struct ValuesAndParameterGrads {
  at::Tensor values, weight_grad, bias_grad;
  std::string node;  // the name of the autograd node that made the values
};

/// f(images, weight, bias) and the gradients of sum(f * upstream) with respect to the weight and
/// the bias, on fresh copies of both.
template <typename Function>
ValuesAndParameterGrads run(Function f, const at::Tensor& images, const at::Tensor& weight,
                            const at::Tensor& bias, const at::Tensor& upstream) {
  const at::Tensor w = weight.detach().clone().requires_grad_();
  const at::Tensor b = bias.detach().clone().requires_grad_();
  const at::Tensor values = f(images, w, b);
  values.backward(upstream);
  return {values.detach(), w.grad(), b.grad(), values.grad_fn()->name()};
}

/// The definition, in double: ATen's convolution, then max-pool and ReLU.
ValuesAndParameterGrads reference(const at::Tensor& images, const at::Tensor& weight,
                                  const at::Tensor& bias, const at::Tensor& upstream) {
  const ValuesAndParameterGrads exact =
      run([](const at::Tensor& x, const at::Tensor& w,
             const at::Tensor& b) { return at::max_pool2d(at::conv2d(x, w, b), 2).relu(); },
          images.to(at::kDouble), weight.to(at::kDouble), bias.to(at::kDouble),
          upstream.to(at::kDouble));
  return {exact.values.to(at::kFloat), exact.weight_grad.to(at::kFloat),
          exact.bias_grad.to(at::kFloat), exact.node};
}

bool is_fused(const ValuesAndParameterGrads& outcome) {
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
  const ValuesAndParameterGrads ours = run(input_conv_pool, images, weight, bias, upstream);
  const ValuesAndParameterGrads exact = reference(images, weight, bias, upstream);
  CAPTURE(ours.node);
  CHECK(is_fused(ours) == fused);
  CHECK(ours.values.sizes() == exact.values.sizes());
  CHECK(ours.values.is_contiguous(at::MemoryFormat::ChannelsLast));
  CHECK(at::allclose(ours.values, exact.values, 1e-5, 1e-5));
  CHECK(ours.weight_grad.sizes() == weight.sizes());
  CHECK(at::allclose(ours.weight_grad, exact.weight_grad, 1e-4, 1e-4));
  CHECK(at::allclose(ours.bias_grad, exact.bias_grad, 1e-4, 1e-4));
}

bool cpu_runs_the_kernel() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

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

  TEST_CASE("both kernels: an odd pooled width takes the AVX2 one, with the same forward values") {
    // Note [The AVX-512 kernels]: 28 x 30 images pool to 12 x 13, which only the AVX2 kernel
    // takes; their first 28 columns are the 28 x 28 images, whose windows either kernel computes.
    torch::manual_seed(25);
    const at::Tensor wide = at::randn({3, 1, 28, 30});
    const at::Tensor square = wide.narrow(3, 0, 28).contiguous();
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
    const at::Tensor from_square = input_conv_pool(square, weight, bias);
    const at::Tensor from_wide = input_conv_pool(wide, weight, bias).narrow(3, 0, 12);
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
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    const ValuesAndParameterGrads one = run(input_conv_pool, images, weight, bias, upstream);
    at::set_num_threads(2);
    const ValuesAndParameterGrads two = run(input_conv_pool, images, weight, bias, upstream);
    at::set_num_threads(threads);
    CHECK(at::equal(one.values, two.values));
    CHECK(at::equal(one.weight_grad, two.weight_grad));
    CHECK(at::equal(one.bias_grad, two.bias_grad));
  }

  TEST_CASE("inputs the fused kernel does not take go through ATen, with the same results") {
    torch::manual_seed(24);
    const at::Tensor weight = at::randn({24, 1, 5, 5}) * 0.2;
    const at::Tensor bias = at::randn({24}) * 0.1;
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
