// tests/unit/test_model_replicas.cpp — the DataParallel mode's arithmetic, with every replica on
// the CPU: scattered losses and gathered gradients equal one model on the whole batch, and the
// replicas follow the primary's parameters.
#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include "config/train_config.hpp"
#include "ddp/model_replicas.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::testing {
namespace {

data::Batch random_batch(std::int64_t size) {
  return {at::randn({size, 1, 28, 28}), at::randint(0, 10, {size}, at::kLong)};
}

/// The gradients of `net`'s parameters, copied.
std::vector<at::Tensor> gradients(model::Classifier& net) {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : net.parameters()) grads.push_back(p.grad().clone());
  return grads;
}

/// Backward of one model on the whole batch: the reference.
std::vector<at::Tensor> whole_batch_gradients(config::Model architecture,
                                              const data::Batch& batch) {
  torch::manual_seed(7);
  const auto net = model::make_model(architecture);
  net->eval();  // no dropout: both sides must compute the same function
  at::cross_entropy_loss(net->forward(batch.inputs), batch.targets).backward();
  return gradients(*net);
}

/// Backward of `replica_count` CPU replicas, gradients gathered into the primary.
std::vector<at::Tensor> replica_gradients(config::Model architecture, const data::Batch& batch,
                                          size_t replica_count, at::Tensor* loss_sum = nullptr) {
  torch::manual_seed(7);
  const auto primary = model::make_model(architecture);
  primary->eval();
  torch::manual_seed(99);  // replicas must take the primary's parameters, not their own
  ddp::ModelReplicas replicas(*primary, architecture,
                              std::vector<c10::Device>(replica_count, c10::Device(c10::kCPU)));
  std::vector<at::Tensor> losses = replicas.weighted_losses(batch);
  if (loss_sum != nullptr) *loss_sum = at::stack(losses).sum().detach();
  torch::autograd::backward(losses);
  replicas.gather_gradients();
  return gradients(*primary);
}

void check_close(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(at::allclose(got[i], want[i], /*rtol=*/1e-5, /*atol=*/1e-6));
  }
}

}  // namespace

TEST_SUITE("ModelReplicas") {
  TEST_CASE("three replicas give the gradients of one model on the whole batch") {
    torch::manual_seed(1);
    const data::Batch batch = random_batch(10);  // chunks of 4, 4 and 2
    for (const config::Model architecture : {config::Model::kLinear, config::Model::kCnn}) {
      const std::string name = config::to_string(architecture);
      CAPTURE(name);
      at::Tensor loss_sum;
      check_close(replica_gradients(architecture, batch, 3, &loss_sum),
                  whole_batch_gradients(architecture, batch));
      // The weighted chunk losses add up to the mean loss of the batch.
      torch::manual_seed(7);
      const auto net = model::make_model(architecture);
      net->eval();
      torch::NoGradGuard no_grad;
      CHECK(loss_sum.item<double>() ==
            doctest::Approx(
                at::cross_entropy_loss(net->forward(batch.inputs), batch.targets).item<double>())
                .epsilon(1e-5));
    }
  }

  TEST_CASE("a batch smaller than the replica count leaves the extra replicas idle") {
    torch::manual_seed(2);
    const data::Batch batch = random_batch(2);
    check_close(replica_gradients(config::Model::kLinear, batch, 4),
                whole_batch_gradients(config::Model::kLinear, batch));
  }

  TEST_CASE("the first chunk is the batch divided by the replica count, rounded up") {
    CHECK(ddp::ModelReplicas::chunk_size(10, 3) == 4);  // chunks of 4, 4 and 2
    CHECK(ddp::ModelReplicas::chunk_size(64, 2) == 32);
    CHECK(ddp::ModelReplicas::chunk_size(2, 4) == 1);  // two chunks of 1, two replicas idle
    CHECK(ddp::ModelReplicas::chunk_size(256, 1) == 256);
  }

  TEST_CASE("replicas start from the primary's parameters and follow it after a step") {
    torch::manual_seed(3);
    const auto primary = model::make_model(config::Model::kMlp);
    ddp::ModelReplicas replicas(*primary, config::Model::kMlp,
                                {c10::Device(c10::kCPU), c10::Device(c10::kCPU)});
    // Gradients of the second replica reach the primary, and are zeroed on the replica.
    std::vector<at::Tensor> losses = replicas.weighted_losses(random_batch(8));
    REQUIRE(losses.size() == 2);
    torch::autograd::backward(losses);
    replicas.gather_gradients();
    {
      torch::NoGradGuard no_grad;
      for (at::Tensor p : primary->parameters()) p.sub_(p.grad(), 0.1);  // an SGD step
    }
    replicas.broadcast_parameters();
    // A fresh forward of identical halves gives identical chunk losses: the replica holds the
    // primary's new parameters.
    const data::Batch half = random_batch(4);
    const data::Batch doubled{at::cat({half.inputs, half.inputs}),
                              at::cat({half.targets, half.targets})};
    primary->eval();
    const std::vector<at::Tensor> after = replicas.weighted_losses(doubled);
    CHECK(at::equal(after[0], after[1]));
  }
}

}  // namespace mnist_ddp::testing
