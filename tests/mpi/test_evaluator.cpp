// tests/mpi/test_evaluator.cpp — sharded evaluation gives what a plain loop over the whole test
// set gives, image by image on one process, and the single-rank result.
#include <doctest/doctest.h>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include "distributed/mpi_communicator.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {
namespace {

constexpr double kMean = 0.1307, kStd = 0.3081;

/// The reference: every image alone, normalized as torchvision's Normalize defines it, its
/// cross-entropy from log_softmax, and a hit when the largest logit is the label's.
EvalResult one_image_at_a_time(model::Classifier& model, const data::Dataset& set) {
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult result;
  double loss_sum = 0;
  for (std::int64_t i = 0; i < set.size(); ++i) {
    const at::Tensor pixels = set.images[i].to(at::kFloat).div(255.0);
    const at::Tensor input = pixels.sub(kMean).div(kStd).reshape({1, 1, 28, 28});
    const at::Tensor logits = model.forward(input)[0];
    const std::int64_t label = set.labels[i].item<std::int64_t>();
    loss_sum -= at::log_softmax(logits.to(at::kDouble), 0)[label].item<double>();
    result.correct += logits.argmax().item<std::int64_t>() == label ? 1 : 0;
    ++result.count;
  }
  result.loss = loss_sum / static_cast<double>(result.count);
  result.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.count);
  model.train();
  return result;
}

TEST_CASE(
    "evaluation over N ranks equals a plain loop over every image, for a size not "
    "divisible by N") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const data::Dataset test_set = testing::synthetic_dataset(997, /*seed=*/5);
  const data::BatchMaker batches(test_set, kMean, kStd);
  torch::manual_seed(3);
  const auto model = model::make_model(config::Model::kMlp);

  const EvalResult expected = one_image_at_a_time(*model, test_set);
  // An untrained model on random images: some right, most wrong, so counting is exercised.
  REQUIRE(expected.correct > 0);
  REQUIRE(expected.correct < expected.count);

  const EvalResult sharded = evaluate(*model, test_set, batches, everyone, /*batch_size=*/100);
  CHECK(model->is_training());  // evaluation leaves the model as it found it
  CHECK(sharded.count == 997);
  CHECK(sharded.correct == expected.correct);
  CHECK(sharded.accuracy == doctest::Approx(expected.accuracy).epsilon(1e-12));
  // Logits are float: other batch compositions change their last bits, not the decisions.
  CHECK(sharded.loss == doctest::Approx(expected.loss).epsilon(1e-6));

  const EvalResult single = evaluate(*model, test_set, batches, alone, /*batch_size=*/64);
  CHECK(single.count == 997);
  CHECK(single.correct == sharded.correct);
  CHECK(single.loss == doctest::Approx(sharded.loss).epsilon(1e-6));
}

}  // namespace
}  // namespace mnist_ddp::train
