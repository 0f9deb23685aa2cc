// tests/mpi/test_gradient_reducer.cpp — bucketed, overlapped gradient reduction: many tiny
// buckets equal one bucket, K micro-batches equal one batch of K*B, compressed gradients stay
// close, and a stop request on one rank stops every rank at the same step.
#include <doctest/doctest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "ddp/gradient_reducer.hpp"
#include "distributed/mpi_communicator.hpp"
#include "model/classifier.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::ddp {
namespace {

config::TrainConfig reducer_config() {
  config::TrainConfig config;
  config.model = "mlp";
  config.epochs = 1;
  config.batch_size = 8;
  config.max_steps = 6;
  config.lr = 0.05;
  config.momentum = 0.9;
  config.seed = 5;
  return config;
}

/// Final parameters after training `config` on every rank, with the summary.
std::pair<at::Tensor, train::TrainSummary> trained(
    const config::TrainConfig& config, const train::TrainerHooks& hooks = train::TrainerHooks{}) {
  static const data::Dataset train_set = testing::synthetic_dataset(960, /*seed=*/31);
  static const data::Dataset test_set = testing::synthetic_dataset(32, /*seed=*/32);
  distributed::MpiCommunicator comm(testing::test_world().comm());
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const auto model = model::make_model(config.model);
  train::Trainer trainer(config, distributed::DevicePlan{}, comm, *model, train_set, test_set);
  const train::TrainSummary summary = trainer.run(hooks);
  std::vector<at::Tensor> flat;
  for (const at::Tensor& p : model->parameters()) flat.push_back(p.detach().reshape({-1}));
  return {at::cat(flat), summary};
}

double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST_CASE("one bucket per parameter gives the parameters of a single bucket") {
  distributed::MpiCommunicator comm(testing::test_world().comm());
  torch::manual_seed(1);
  const auto model = model::make_model("mlp");
  GradientReducer tiny(comm, model->parameters(), /*bucket_mb=*/1e-6, at::kFloat);
  CHECK(tiny.bucket_count() == model->parameters().size());

  config::TrainConfig one_bucket = reducer_config();
  config::TrainConfig many_buckets = reducer_config();
  many_buckets.bucket_mb = 1e-6;
  const double difference = max_difference(trained(one_bucket).first, trained(many_buckets).first);
  CAPTURE(difference);
  // Same sums; Open MPI may pick another reduction order for other message sizes.
  CHECK(difference <= (comm.size() == 2 ? 0.0 : 1e-6));
}

TEST_CASE("K micro-batches of B take the step of one batch of K*B") {
  config::TrainConfig accumulated = reducer_config();
  accumulated.grad_accum = 4;
  config::TrainConfig large = reducer_config();
  large.batch_size = accumulated.batch_size * accumulated.grad_accum;
  const auto [with_accumulation, summary] = trained(accumulated);
  CHECK(summary.steps == 6);
  const double difference = max_difference(with_accumulation, trained(large).first);
  CAPTURE(difference);
  CHECK(difference < 1e-6);
}

TEST_CASE("gradients sent as bfloat16 or float16 stay close to float32") {
  const at::Tensor exact = trained(reducer_config()).first;
  for (const char* dtype : {"bf16", "fp16"}) {
    CAPTURE(dtype);
    config::TrainConfig compressed = reducer_config();
    compressed.grad_dtype = dtype;
    const double difference = max_difference(trained(compressed).first, exact);
    CAPTURE(difference);
    CHECK(difference < 1e-2);
    CHECK(difference > 0);  // the compression really happened
  }
}

TEST_CASE("a stop request on the last rank stops every rank after the same step") {
  const distributed::World& world = testing::test_world();
  int steps_seen = 0;
  train::TrainerHooks hooks;
  hooks.on_batch = [&](const at::Tensor&) { ++steps_seen; };
  hooks.stop_requested = [&] { return world.rank() == world.size() - 1 && steps_seen >= 3; };
  const train::TrainSummary summary = trained(reducer_config(), hooks).second;
  CHECK(summary.preempted);
  CHECK(summary.steps == 3);
}

}  // namespace
}  // namespace mnist_ddp::ddp
