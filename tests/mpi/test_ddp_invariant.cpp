// tests/mpi/test_ddp_invariant.cpp — the data-parallel invariant: N ranks with batch B take the
// same steps as one rank with batch N*B on the same data, so they end with the same parameters;
// they start from rank 0's parameters whatever their own, and draw dropout masks of their own.
#include <doctest/doctest.h>

#include <string>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "distributed/mpi_communicator.hpp"
#include "model/classifier.hpp"
#include "support/cpu_plan.hpp"
#include "support/flat_parameters.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {
namespace {

constexpr int kBatch = 8;
constexpr int kSteps = 5;
// Divisible by N * kBatch for N = 2, 3, 4, so no rank needs padding.
constexpr std::int64_t kUnpaddedTrainSize = 960;

/// Trains a fresh model for kSteps steps of `batch` images per rank over `comm`.
at::Tensor train_parameters(const config::TrainConfig& base, distributed::Communicator& comm,
                            int batch, const data::Dataset& train_set,
                            const data::Dataset& test_set) {
  config::TrainConfig config = base;
  config.batch_size = batch;
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const auto model = model::make_model(config.model);
  Trainer trainer(config, testing::cpu_plan(comm), comm, *model, train_set, test_set);
  const TrainSummary summary = trainer.run(TrainerHooks{});
  CHECK(summary.steps == kSteps);
  return testing::flat_parameters(*model);
}

void check_invariant(const config::TrainConfig& config) {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const data::Dataset train_set = testing::synthetic_dataset(kUnpaddedTrainSize, /*seed=*/11);
  const data::Dataset test_set = testing::synthetic_dataset(64, /*seed=*/12);

  const at::Tensor distributed = train_parameters(config, everyone, kBatch, train_set, test_set);
  const at::Tensor single =
      train_parameters(config, alone, kBatch * world.size(), train_set, test_set);
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const at::Tensor initial = testing::flat_parameters(*model::make_model(config.model));

  const double difference = (distributed - single).abs().max().item<double>();
  const double moved = (single - initial).abs().max().item<double>();
  CAPTURE(difference);
  CAPTURE(moved);
  CHECK(difference < 1e-5);
  CHECK(moved > 1e-3);  // training really changed the parameters
}

config::TrainConfig invariant_config() {
  config::TrainConfig config;
  config.model = config::Model::kLinear;
  config.epochs = 1;
  config.max_steps = kSteps;
  config.lr = 0.05;
  config.seed = 7;
  return config;
}

TEST_CASE("N ranks with batch B match one rank with batch N*B: linear, SGD") {
  check_invariant(invariant_config());
}

TEST_CASE("N ranks with batch B match one rank with batch N*B: mlp, SGD with momentum") {
  config::TrainConfig config = invariant_config();
  config.model = config::Model::kMlp;
  config.momentum = 0.9;
  check_invariant(config);
}

TEST_CASE("parameters are broadcast from rank 0 even when ranks initialise differently") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  const data::Dataset train_set = testing::synthetic_dataset(kUnpaddedTrainSize, /*seed=*/11);
  // cnn and fastcnn keep their convolution weights channels-last: the broadcast must land there.
  for (const config::Model architecture :
       {config::Model::kLinear, config::Model::kCnn, config::Model::kFastCnn}) {
    const std::string name = config::to_string(architecture);
    CAPTURE(name);
    config::TrainConfig config = invariant_config();
    config.model = architecture;
    torch::manual_seed(100 + world.rank());  // a different initialisation on every rank
    const auto model = model::make_model(config.model);
    Trainer trainer(config, testing::cpu_plan(everyone), everyone, *model, train_set, train_set);
    at::Tensor mine = testing::flat_parameters(*model);
    at::Tensor rank0 = mine.clone();
    everyone.broadcast(rank0, /*root=*/0);
    CHECK(at::equal(mine, rank0));
  }
}

TEST_CASE("ranks draw their own dropout masks, the same ones run to run") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  const data::Dataset train_set = testing::synthetic_dataset(kUnpaddedTrainSize, /*seed=*/11);
  config::TrainConfig config = invariant_config();
  config.model = config::Model::kCnn;
  /// The trained model's output for one fixed input on every rank: (ranks, 2, 10).
  const auto outputs = [&] {
    torch::manual_seed(static_cast<std::uint64_t>(config.seed));
    const auto model = model::make_model(config.model);
    Trainer trainer(config, testing::cpu_plan(everyone), everyone, *model, train_set, train_set);
    model->train();
    return everyone.all_gather(model->forward(at::ones({2, 1, 28, 28})).detach());
  };
  const at::Tensor first = outputs();
  for (int rank = 1; rank < world.size(); ++rank) CHECK_FALSE(at::equal(first[rank], first[0]));
  CHECK(at::equal(outputs(), first));
}

}  // namespace
}  // namespace mnist_ddp::train
