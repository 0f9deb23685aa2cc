// tests/unit/test_dropout.cpp — inverted_dropout: identity outside training, the Bernoulli
// mask's rate and scale, gradients through the mask, seeding, layout and dtype.
#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "model/dropout.hpp"

namespace mnist_ddp::testing {

using model::inverted_dropout;

TEST_SUITE("inverted_dropout") {
  TEST_CASE("outside training, or with p = 0, it is the input itself") {
    const at::Tensor x = at::randn({8, 16});
    CHECK(inverted_dropout(x, 0.5, /*training=*/false).is_same(x));
    CHECK(inverted_dropout(x, 0.0, /*training=*/true).is_same(x));
  }

  TEST_CASE("each element is zeroed with probability p, the rest scaled by 1 / (1 - p)") {
    for (const double p : {0.25, 0.5}) {
      CAPTURE(p);
      torch::manual_seed(3);
      const at::Tensor x = at::rand({200'000}) + 1.0;  // no zeros of its own
      const at::Tensor y = inverted_dropout(x, p, /*training=*/true);
      const at::Tensor kept = y != 0;
      // 200k Bernoulli draws: the zeroed share's standard deviation is about 0.001.
      CHECK(1.0 - kept.to(at::kDouble).mean().item<double>() == doctest::Approx(p).epsilon(0.02));
      CHECK(at::allclose(y.masked_select(kept), x.masked_select(kept) / (1.0 - p)));
    }
  }

  TEST_CASE("the gradient is the mask's scale: zero where dropped, 1 / (1 - p) where kept") {
    const at::Tensor x = (at::rand({64, 32}) + 1.0).requires_grad_();
    const at::Tensor y = inverted_dropout(x, 0.25, /*training=*/true);
    y.sum().backward();
    const at::Tensor expected = (y != 0).to(at::kFloat) / 0.75;
    CHECK(at::allclose(x.grad(), expected));
  }

  TEST_CASE("the global seed decides the mask") {
    const at::Tensor x = at::ones({1000});
    torch::manual_seed(5);
    const at::Tensor first = inverted_dropout(x, 0.5, true);
    torch::manual_seed(5);
    const at::Tensor again = inverted_dropout(x, 0.5, true);
    const at::Tensor next = inverted_dropout(x, 0.5, true);
    CHECK(at::equal(first, again));
    CHECK_FALSE(at::equal(again, next));
  }

  TEST_CASE("the output keeps a channels-last layout and a bfloat16 type") {
    const at::Tensor images = at::randn({4, 8, 5, 5}).contiguous(at::MemoryFormat::ChannelsLast);
    CHECK(inverted_dropout(images, 0.25, true).is_contiguous(at::MemoryFormat::ChannelsLast));
    const at::Tensor half = at::rand({10'000}, at::kBFloat16) + 1.0;
    const at::Tensor y = inverted_dropout(half, 0.5, true);
    CHECK(std::string(c10::toString(y.scalar_type())) == "BFloat16");
    CHECK(y.max().item<float>() == doctest::Approx(2 * half.max().item<float>()));
  }
}

}  // namespace mnist_ddp::testing
