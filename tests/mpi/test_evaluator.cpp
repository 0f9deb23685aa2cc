// tests/mpi/test_evaluator.cpp — sharded evaluation gives exactly the single-rank result.
#include <doctest/doctest.h>

#include <torch/utils.h>

#include "distributed/mpi_communicator.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/evaluator.hpp"

namespace mnist_ddp::train {
namespace {

TEST_CASE("evaluation over N ranks equals evaluation on one rank, for a size not divisible by N") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const data::Dataset test_set = testing::synthetic_dataset(997, /*seed=*/5);
  const data::BatchMaker batches(test_set, 0.1307, 0.3081);
  torch::manual_seed(3);
  const auto model = model::make_model("mlp");

  const EvalResult sharded = evaluate(*model, test_set, batches, everyone, /*batch_size=*/100);
  const EvalResult single = evaluate(*model, test_set, batches, alone, /*batch_size=*/100);
  CHECK(sharded.count == 997);
  CHECK(sharded.correct == single.correct);
  CHECK(sharded.accuracy == single.accuracy);
  // Logits are float: other batch compositions change their last bits, not the decisions.
  CHECK(sharded.loss == doctest::Approx(single.loss).epsilon(1e-6));
  CHECK(single.loss > 0);
}

}  // namespace
}  // namespace mnist_ddp::train
