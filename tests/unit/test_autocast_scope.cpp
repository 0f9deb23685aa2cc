// tests/unit/test_autocast_scope.cpp — --precision bf16 on the CPU: matrix products in bfloat16
// inside the scope, float32 outside and after it, parameters and gradients always float32;
// autocast_enabled says which.
#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "model/autocast_scope.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::testing {
namespace {

std::string dtype(const at::Tensor& tensor) { return c10::toString(tensor.scalar_type()); }

}  // namespace

TEST_SUITE("AutocastScope") {
  TEST_CASE("bf16 forward inside the scope, fp32 outside, fp32 weights and gradients") {
    torch::manual_seed(1);
    const auto net = model::make_model(config::Model::kLinear);
    const at::Tensor images = at::randn({4, 1, 28, 28});
    at::Tensor logits;
    CHECK_FALSE(model::autocast_enabled(c10::kCPU));
    {
      const model::AutocastScope scope(c10::kCPU, /*enabled=*/true);
      CHECK(model::autocast_enabled(c10::kCPU));
      CHECK_FALSE(model::autocast_enabled(c10::kCUDA));  // the CPU's state only
      logits = net->forward(images);
      {
        const model::AutocastScope inner(c10::kCPU, /*enabled=*/false);  // nests as a no-op
        CHECK(dtype(net->forward(images)) == "BFloat16");
        CHECK(model::autocast_enabled(c10::kCPU));
      }
    }
    CHECK_FALSE(model::autocast_enabled(c10::kCPU));
    CHECK(dtype(logits) == "BFloat16");
    CHECK(dtype(net->forward(images)) == "Float");  // the previous state is back

    at::cross_entropy_loss(logits.to(at::kFloat), at::zeros({4}, at::kLong)).backward();
    for (const at::Tensor& p : net->parameters()) {
      CHECK(dtype(p) == "Float");
      CHECK(dtype(p.grad()) == "Float");
    }
  }

  TEST_CASE("disabled, it changes nothing") {
    const auto net = model::make_model(config::Model::kLinear);
    const model::AutocastScope scope(c10::kCPU, /*enabled=*/false);
    CHECK(dtype(net->forward(at::randn({2, 1, 28, 28}))) == "Float");
  }
}

}  // namespace mnist_ddp::testing
