// tests/unit/test_classification_loss.cpp — classification_loss against ATen's cross_entropy:
// the same loss and logits' gradient, large logits, bf16 logits, a target out of range.
#include <string>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "model/classification_loss.hpp"

namespace mnist_ddp::testing {
namespace {

/// The loss and the logits' gradient of `loss_of` at `logits`, the gradient scaled by 3.
template <typename Loss>
std::pair<at::Tensor, at::Tensor> loss_and_gradient(const at::Tensor& logits,
                                                    const at::Tensor& targets, Loss loss_of) {
  const at::Tensor x = logits.detach().clone().requires_grad_();
  const at::Tensor loss = loss_of(x, targets);
  torch::autograd::backward({loss * 3});
  return {loss.detach(), x.grad()};
}

TEST_CASE("classification_loss: ATen's cross-entropy, in value and gradient, in one pass") {
  torch::manual_seed(3);
  for (const auto& shape : {std::pair{64, 0.0}, std::pair{1, 0.0}, std::pair{64, 1e4}}) {
    const std::int64_t batch = shape.first;
    const double offset = shape.second;
    CAPTURE(batch);
    CAPTURE(offset);
    const at::Tensor logits = at::randn({batch, 10}) * 4 + offset;  // large logits: no overflow
    const at::Tensor targets = at::randint(0, 10, {batch}, at::kLong);
    const auto [loss, gradient] = loss_and_gradient(logits, targets, model::classification_loss);
    const auto [expected, expected_gradient] = loss_and_gradient(
        logits, targets,
        [](const at::Tensor& x, const at::Tensor& t) { return at::cross_entropy_loss(x, t); });
    CHECK(std::string(c10::toString(loss.scalar_type())) == "Float");
    CHECK(loss.dim() == 0);
    CHECK(loss.item<double>() == doctest::Approx(expected.item<double>()).epsilon(1e-6));
    CHECK((gradient - expected_gradient).abs().max().item<double>() < 1e-6);
  }
}

TEST_CASE("classification_loss: bf16 logits give a float32 loss, and a target out of range fails") {
  const at::Tensor targets = at::tensor({1, 0}, at::kLong);
  const at::Tensor logits = at::tensor({0.5F, 2.0F, -1.0F, 0.25F}).reshape({2, 2});
  const at::Tensor loss = model::classification_loss(logits.to(at::kBFloat16), targets);
  CHECK(std::string(c10::toString(loss.scalar_type())) == "Float");
  CHECK(loss.item<double>() ==
        doctest::Approx(at::cross_entropy_loss(logits, targets).item<double>()).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(model::classification_loss(logits, at::tensor({1, 2}, at::kLong)),
                       "classification_loss: target 2 is not one of 2 classes", Error);
}

}  // namespace
}  // namespace mnist_ddp::testing
