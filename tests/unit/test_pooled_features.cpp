// tests/unit/test_pooled_features.cpp — pooled_features against ATen's max_pool2d, ReLU and
// flatten: values and gradients bit for bit, with ties, clipped windows, NaN, bfloat16, several
// threads, and the inputs the fused kernel leaves to ATen.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "model/pooled_features.hpp"

namespace mnist_ddp::testing {
namespace {

using model::pooled_features;

struct Outcome {
  at::Tensor values, input_grad;
};

/// f(x) and the gradient of sum(f(x) * upstream) with respect to x, on a fresh copy of x.
template <typename Function>
Outcome run(Function f, const at::Tensor& x, const at::Tensor& upstream) {
  const at::Tensor input = x.detach().clone().requires_grad_();
  const at::Tensor values = f(input);
  values.backward(upstream);
  return {values.detach(), input.grad()};
}

at::Tensor aten_pooled_features(const at::Tensor& x) {
  return at::max_pool2d(x, 2).relu().flatten(1);
}

/// Checks that pooled_features equals ATen on x, values and gradients identical.
void check_matches_aten(const at::Tensor& x) {
  const std::int64_t features = x.size(1) * (x.size(2) / 2) * (x.size(3) / 2);
  const at::Tensor upstream = at::randn({x.size(0), features}, x.options());
  const Outcome ours = run(pooled_features, x, upstream);
  const Outcome aten = run(aten_pooled_features, x, upstream);
  CHECK(ours.values.sizes() == aten.values.sizes());
  CHECK(at::equal(ours.values, aten.values));
  CHECK(at::equal(ours.input_grad, aten.input_grad));
  CHECK(ours.input_grad.is_contiguous(x.suggest_memory_format()));
}

at::Tensor channels_last(const at::Tensor& x) {
  return x.contiguous(at::MemoryFormat::ChannelsLast);
}

}  // namespace

TEST_SUITE("pooled_features") {
  TEST_CASE("channels-last float and double input: ATen's values and gradients") {
    torch::manual_seed(11);
    check_matches_aten(channels_last(at::randn({3, 5, 6, 8})));
    check_matches_aten(channels_last(at::randn({2, 3, 4, 4}, at::kDouble)));
  }

  TEST_CASE("ties go to the first maximum in row order; non-positive windows get no gradient") {
    torch::manual_seed(12);
    // Integers in [-2, 2]: most windows tie, and many have no positive value.
    check_matches_aten(channels_last(at::randint(-2, 3, {4, 7, 6, 6}, at::kFloat)));
  }

  TEST_CASE("a NaN wins its window and passes the ReLU, as in ATen") {
    at::Tensor x = at::randn({2, 3, 4, 4});
    x[0][1][2][3] = std::numeric_limits<float>::quiet_NaN();
    const at::Tensor input = channels_last(x);
    const at::Tensor upstream = at::randn({2, 12});
    const Outcome ours = run(pooled_features, input, upstream);
    const Outcome aten = run(aten_pooled_features, input, upstream);
    CHECK(at::equal(ours.values.isnan(), aten.values.isnan()));
    CHECK(at::equal(ours.values.nan_to_num(), aten.values.nan_to_num()));
    CHECK(at::equal(ours.input_grad, aten.input_grad));
    CHECK(ours.input_grad[0][1][2][3].item<float>() == upstream[0][4 + 3].item<float>());
  }

  TEST_CASE("bfloat16 input, as autocast gives it") {
    torch::manual_seed(13);
    check_matches_aten(channels_last(at::randn({2, 4, 6, 6}).to(at::kBFloat16)));
  }

  TEST_CASE("images split across threads give the same result") {
    torch::manual_seed(14);
    const int threads = at::get_num_threads();
    at::set_num_threads(2);
    check_matches_aten(channels_last(at::randn({5, 3, 4, 6})));
    at::set_num_threads(threads);
  }

  TEST_CASE("inputs the fused kernel does not take (NCHW, odd sizes) still match ATen") {
    torch::manual_seed(15);
    check_matches_aten(at::randn({2, 3, 6, 6}));                 // NCHW
    check_matches_aten(channels_last(at::randn({2, 3, 7, 5})));  // odd: the last row dropped
  }
}

}  // namespace mnist_ddp::testing
