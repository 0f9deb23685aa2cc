// tests/unit/test_pooled_features.cpp — pooled_features and pooled_channels_last against ATen's
// max_pool2d, ReLU and flatten and against the definition in plain loops: values and gradients bit
// for bit, with ties, clipped windows, NaN, bfloat16, several threads, and the inputs the fused
// kernel leaves to ATen.
#include <utility>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "model/pooled_features.hpp"
#include "support/intra_op_threads.hpp"

namespace mnist_ddp::testing {
namespace {

using model::pooled_channels_last;
using model::pooled_features;

struct ValuesAndInputGrad {
  at::Tensor values, input_grad;
};

/// f(x) and the gradient of sum(f(x) * upstream) with respect to x, on a fresh copy of x.
template <typename Function>
ValuesAndInputGrad run(Function f, const at::Tensor& x, const at::Tensor& upstream) {
  const at::Tensor input = x.detach().clone().requires_grad_();
  const at::Tensor values = f(input);
  values.backward(upstream);
  return {values.detach(), input.grad()};
}

at::Tensor aten_pooled_features(const at::Tensor& x) {
  return at::max_pool2d(x, 2).relu().flatten(1);
}

/// pooled_channels_last's map, flattened in C, H, W order, comparable with the features.
at::Tensor flattened_map(const at::Tensor& x) { return pooled_channels_last(x).flatten(1); }

/// The definition in plain loops, apart from ATen: each 2x2 window's maximum (the first in row
/// order on ties; a last odd row or column dropped) after a ReLU, in C, H, W order; the gradient
/// goes to that first maximum when it is positive. Exact: a maximum is one of the inputs.
ValuesAndInputGrad reference(const at::Tensor& x, const at::Tensor& upstream) {
  const at::Tensor in = x.to(at::kDouble).contiguous();
  const at::Tensor up = upstream.to(at::kDouble).contiguous();
  const std::int64_t channels = x.size(1), pooled_h = x.size(2) / 2, pooled_w = x.size(3) / 2;
  at::Tensor values = at::zeros({x.size(0), channels * pooled_h * pooled_w}, at::kDouble);
  at::Tensor grad = at::zeros_like(in);
  const auto a = in.accessor<double, 4>();
  const auto u = up.accessor<double, 2>();
  auto v = values.accessor<double, 2>();
  auto g = grad.accessor<double, 4>();
  for (std::int64_t b = 0; b < x.size(0); ++b) {
    for (std::int64_t c = 0; c < channels; ++c) {
      for (std::int64_t oh = 0; oh < pooled_h; ++oh) {
        for (std::int64_t ow = 0; ow < pooled_w; ++ow) {
          std::int64_t best_y = 2 * oh, best_x = 2 * ow;
          for (const auto& [dy, dx] : {std::pair{0, 1}, {1, 0}, {1, 1}}) {
            if (a[b][c][2 * oh + dy][2 * ow + dx] > a[b][c][best_y][best_x]) {
              best_y = 2 * oh + dy;
              best_x = 2 * ow + dx;
            }
          }
          const double best = a[b][c][best_y][best_x];
          if (best <= 0) continue;
          const std::int64_t feature = (c * pooled_h + oh) * pooled_w + ow;
          v[b][feature] = best;
          g[b][c][best_y][best_x] = u[b][feature];
        }
      }
    }
  }
  return {values.to(x.scalar_type()), grad.to(x.scalar_type())};
}

/// Checks that pooled_features, and pooled_channels_last flattened, equal ATen and the plain-loop
/// definition on x (no NaN), values and gradients identical.
void check_matches_aten(const at::Tensor& x) {
  const std::int64_t features = x.size(1) * (x.size(2) / 2) * (x.size(3) / 2);
  const at::Tensor upstream = at::randn({x.size(0), features}, x.options());
  const ValuesAndInputGrad aten = run(aten_pooled_features, x, upstream);
  const ValuesAndInputGrad defined = reference(x, upstream);
  // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
  for (const auto& variant : {std::pair{"pooled_features", &pooled_features},
                              std::pair{"pooled_channels_last", &flattened_map}}) {
    const char* name = variant.first;
    CAPTURE(name);
    const ValuesAndInputGrad ours = run(variant.second, x, upstream);
    CHECK(ours.values.sizes() == aten.values.sizes());
    CHECK(at::equal(ours.values, aten.values));
    CHECK(at::equal(ours.input_grad, aten.input_grad));
    CHECK(at::equal(ours.values, defined.values));
    CHECK(at::equal(ours.input_grad, defined.input_grad));
    CHECK(ours.input_grad.is_contiguous(x.suggest_memory_format()));
  }
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
    const ValuesAndInputGrad ours = run(pooled_features, input, upstream);
    const ValuesAndInputGrad aten = run(aten_pooled_features, input, upstream);
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
    on_threads(2, [] { check_matches_aten(channels_last(at::randn({5, 3, 4, 6}))); });
  }

  TEST_CASE("pooled_channels_last keeps the pooled map, in channels-last, for a convolution") {
    torch::manual_seed(16);
    const at::Tensor x = channels_last(at::randn({3, 24, 8, 8}));
    const at::Tensor map = pooled_channels_last(x);
    CHECK(map.sizes() == at::IntArrayRef{3, 24, 4, 4});
    CHECK(map.is_contiguous(at::MemoryFormat::ChannelsLast));
    // The upstream gradient in either layout: a convolution's backward may give either.
    for (const at::Tensor& upstream :
         {at::randn({3, 24, 4, 4}), channels_last(at::randn({3, 24, 4, 4}))}) {
      const ValuesAndInputGrad ours = run(pooled_channels_last, x, upstream);
      const ValuesAndInputGrad aten =
          run([](const at::Tensor& in) { return at::max_pool2d(in, 2).relu(); }, x, upstream);
      CHECK(at::equal(ours.values, aten.values));
      CHECK(at::equal(ours.input_grad, aten.input_grad));
    }
  }

  // These take ATen's operators inside pooled_features, so the plain-loop definition is the
  // reference that does not repeat the code under test.
  TEST_CASE("inputs the fused kernel does not take (NCHW, odd sizes) match the definition") {
    torch::manual_seed(15);
    check_matches_aten(at::randn({2, 3, 6, 6}));                 // NCHW
    check_matches_aten(channels_last(at::randn({2, 3, 7, 5})));  // odd: the last row dropped
  }
}

}  // namespace mnist_ddp::testing
