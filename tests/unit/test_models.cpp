// tests/unit/test_models.cpp — make_model: output shapes, exact parameter counts, seeded
// initialisation, the cnn against the textbook layer order, fastcnn through the fused kernels at
// each instruction set.
#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "config/train_config.hpp"
#include "model/autocast_scope.hpp"
#include "model/classifier.hpp"
#include "support/force_instruction_set.hpp"

namespace mnist_ddp::testing {
namespace {

using config::Model;
using model::make_model;

/// Scalars in all of the network's parameters.
std::int64_t parameter_count(model::Classifier& net) {
  std::int64_t count = 0;
  for (const at::Tensor& p : net.parameters()) count += p.numel();
  return count;
}

/// True when both networks hold the same parameters, value for value.
bool same_parameters(model::Classifier& a, model::Classifier& b) {
  const auto pa = a.parameters();
  const auto pb = b.parameters();
  if (pa.size() != pb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (!at::equal(pa[i], pb[i])) return false;
  }
  return true;
}

/// The cnn as PyTorch's MNIST example writes it (NCHW, ReLU before pooling, no dropout) with
/// net's parameters, in registration order.
at::Tensor textbook_cnn(const std::vector<at::Tensor>& p, const at::Tensor& images) {
  at::Tensor x = at::conv2d(images, p[0].contiguous(), p[1]).relu();
  x = at::max_pool2d(at::conv2d(x, p[2].contiguous(), p[3]).relu(), 2).flatten(1);
  return at::linear(at::linear(x, p[4], p[5]).relu(), p[6], p[7]);
}

}  // namespace

TEST_SUITE("make_model") {
  TEST_CASE("every network maps (B, 1, 28, 28) to (B, 10) with the expected parameter count") {
    const std::vector<std::pair<Model, std::int64_t>> nets = {
        {Model::kLinear, 784 * 10 + 10},
        {Model::kMlp, 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10},
        // conv1 3x3x32 + 32, conv2 3x3x32x64 + 64, fc1 9216x128 + 128, fc2 128x10 + 10.
        {Model::kCnn, 320 + 18496 + 1179776 + 1290},
        // conv1 5x5x24 + 24, conv2 3x3x24x32 + 32, fc1 800x256 + 256, fc2 256x10 + 10.
        {Model::kFastCnn, 624 + 6944 + 205056 + 2570},
    };
    for (const auto& [architecture, parameters] : nets) {
      const std::string name = config::to_string(architecture);
      CAPTURE(name);
      const auto net = make_model(architecture);
      CHECK(parameter_count(*net) == parameters);
      const at::Tensor logits = net->forward(at::randn({3, 1, 28, 28}));
      CHECK(logits.sizes().vec() == std::vector<std::int64_t>{3, 10});
      CHECK(logits.dtype() == at::kFloat);
    }
  }

  TEST_CASE("the same global seed gives the same initial parameters") {
    for (const Model architecture : {Model::kLinear, Model::kMlp, Model::kCnn, Model::kFastCnn}) {
      const std::string name = config::to_string(architecture);
      CAPTURE(name);
      torch::manual_seed(7);
      const auto first = make_model(architecture);
      torch::manual_seed(7);
      const auto again = make_model(architecture);
      torch::manual_seed(8);
      const auto other = make_model(architecture);
      CHECK(same_parameters(*first, *again));
      CHECK_FALSE(same_parameters(*first, *other));
    }
  }

  TEST_CASE("the cnn's reordered, channels-last layers give the textbook values and gradients") {
    torch::manual_seed(4);
    const auto net = make_model(config::Model::kCnn);
    net->eval();  // dropout off: both sides then compute the same function
    const at::Tensor images = at::randn({5, 1, 28, 28});
    const at::Tensor labels = at::randint(10, {5});
    const at::Tensor ours = net->forward(images);
    at::cross_entropy_loss(ours, labels).backward();

    std::vector<at::Tensor> reference;
    for (const at::Tensor& p : net->parameters()) {
      reference.push_back(p.detach().clone().requires_grad_());
    }
    const at::Tensor expected = textbook_cnn(reference, images);
    at::cross_entropy_loss(expected, labels).backward();
    CHECK(at::allclose(ours, expected, /*rtol=*/1e-4, /*atol=*/1e-5));
    const auto params = net->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      CAPTURE(i);
      CHECK(at::allclose(params[i].grad(), reference[i].grad(), 1e-4, 1e-6));
    }
  }

  TEST_CASE("the fastcnn's channels-last layers and fused pooling give the recipe's values") {
    torch::manual_seed(5);
    const auto net = make_model(config::Model::kFastCnn);
    const at::Tensor images = at::randn({4, 1, 28, 28});
    const at::Tensor labels = at::randint(10, {4});
    const at::Tensor ours = net->forward(images);
    at::cross_entropy_loss(ours, labels).backward();

    // As tuomaso/train_mnist_fast writes it, in NCHW, in float64: oneDNN 3.7's float32 NCHW
    // convolution of 24 input channels is wrong on AVX-512 (LibTorch 2.6, bench/README.md).
    std::vector<at::Tensor> p;
    for (const at::Tensor& q : net->parameters()) {
      p.push_back(q.detach().to(at::kDouble).contiguous().requires_grad_());
    }
    at::Tensor x = at::max_pool2d(at::conv2d(images.to(at::kDouble), p[0], p[1]), 2).relu();
    x = at::max_pool2d(at::conv2d(x, p[2], p[3]), 2).relu().flatten(1);
    const at::Tensor expected = at::linear(at::linear(x, p[4], p[5]).relu(), p[6], p[7]);
    at::cross_entropy_loss(expected, labels).backward();
    CHECK(at::allclose(ours.to(at::kDouble), expected, /*rtol=*/1e-4, /*atol=*/1e-5));
    const auto params = net->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      CAPTURE(i);
      CHECK(at::allclose(params[i].grad().to(at::kDouble), p[i].grad(), 1e-4, 1e-6));
    }
  }

  TEST_CASE("fastcnn goes through both fused kernels, forward and backward, at each level") {
    using model::InstructionSet;
    // The paths each level must take; ATen's backward records none.
    const auto expected = [](InstructionSet level) -> std::string {
      switch (level) {
        case InstructionSet::kAvx512:
          return "input_conv_pool AVX-512/AVX-512, conv_pooled_features AVX-512/AVX-512";
        case InstructionSet::kAvx2:
          return "input_conv_pool AVX2/AVX2, conv_pooled_features ATen/not run";
        default:
          return "input_conv_pool ATen/not run, conv_pooled_features ATen/not run";
      }
    };
    if (model::instruction_set() != InstructionSet::kAvx512) {
      WARN_MESSAGE(false, "this CPU lacks AVX-512: the AVX2 and ATen paths are checked");
    }
    torch::manual_seed(6);
    const auto net = model::make_fast_cnn_net();
    const at::Tensor images = at::randn({4, 1, 28, 28});
    at::Tensor logits_at_full_level;
    for (const InstructionSet cap :
         {InstructionSet::kAvx512, InstructionSet::kAvx2, InstructionSet::kNone}) {
      const ForceInstructionSet force(cap);
      const InstructionSet level = model::instruction_set();
      CAPTURE(static_cast<int>(level));
      forget_paths();
      net->zero_grad();
      const at::Tensor logits = net->forward(images);
      logits.sum().backward();
      CHECK(paths_taken() == expected(level));
      // Every path computes the same function.
      if (!logits_at_full_level.defined()) logits_at_full_level = logits.detach();
      CHECK(at::allclose(logits, logits_at_full_level, 1e-4, 1e-5));
      // --precision bf16 takes the same paths (Note [The fused kernels under bf16]).
      forget_paths();
      at::Tensor cast_logits;
      {
        const model::AutocastScope bf16(c10::kCPU, /*enabled=*/true);
        cast_logits = net->forward(images);
      }
      cast_logits.sum().backward();
      CHECK(cast_logits.dtype() == at::kBFloat16);
      CHECK(paths_taken() == expected(level));
    }
  }
}

}  // namespace mnist_ddp::testing
