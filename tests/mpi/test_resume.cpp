// tests/mpi/test_resume.cpp — checkpoints continue training exactly: bitwise the same parameters
// as an uninterrupted run with the same world size (learning-rate schedules included), and the
// same epoch order with another one.
#include <doctest/doctest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "data/distributed_sampler.hpp"
#include "distributed/agreement.hpp"
#include "distributed/mpi_communicator.hpp"
#include "model/classifier.hpp"
#include "support/cpu_plan.hpp"
#include "support/flat_parameters.hpp"
#include "support/idx_writer.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {
namespace {

constexpr std::int64_t kPaddedTrainSize = 97;  // not a multiple of any batch or world size: padding

config::TrainConfig resume_config(config::Model architecture, config::Optimizer optimizer) {
  config::TrainConfig config;
  config.model = architecture;
  config.optimizer = optimizer;
  config.momentum = optimizer == config::Optimizer::kSgd ? 0.9 : 0.0;
  config.lr = optimizer == config::Optimizer::kSgd ? 0.05 : 0.001;
  config.epochs = 2;
  config.batch_size = 8;
  config.test_batch_size = 50;
  config.seed = 3;
  return config;
}

/// A fresh run of `config` over `comm`, optionally continuing from `saved`; returns the final
/// parameters, and when `stop_after` > 0 the checkpoint taken after that many steps instead.
struct Run {
  at::Tensor parameters;
  checkpoint::LoadedCheckpoint checkpoint;
  TrainSummary summary;
};

Run train_run(config::TrainConfig config, distributed::Communicator& comm,
              const checkpoint::LoadedCheckpoint* saved, std::int64_t stop_after,
              const std::function<void(const at::Tensor&)>& on_batch = nullptr,
              const GraphPlan& graphs = {}) {
  static const data::Dataset train_set = testing::synthetic_dataset(kPaddedTrainSize, /*seed=*/21);
  static const data::Dataset test_set = testing::synthetic_dataset(40, /*seed=*/22);
  config.max_steps = stop_after;
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const auto model = model::make_model(config.model);
  Trainer trainer(config, testing::cpu_plan(comm), comm, *model, train_set, test_set, graphs);
  if (saved != nullptr) trainer.restore(*saved);
  TrainerHooks hooks;
  hooks.on_batch = on_batch;
  Run run;
  run.summary = trainer.run(hooks);
  if (stop_after > 0) {
    // Through the file format, as a real resume goes.
    run.checkpoint = checkpoint::decode_training_checkpoint(
        checkpoint::encode_checkpoint(trainer.checkpoint()), "test");
  }
  run.parameters = testing::flat_parameters(*model);
  return run;
}

void check_exact_resume(const config::TrainConfig& config, const GraphPlan& graphs = {}) {
  distributed::MpiCommunicator comm(testing::test_world().comm());
  const Run uninterrupted = train_run(config, comm, nullptr, 0, nullptr, graphs);
  const std::int64_t per_rank = (kPaddedTrainSize + comm.size() - 1) / comm.size();
  const std::int64_t steps_per_epoch = (per_rank + config.batch_size - 1) / config.batch_size;
  // Mid-epoch in the first epoch, at the epoch boundary, and mid-epoch in the second.
  for (std::int64_t stop : {std::int64_t{2}, steps_per_epoch, steps_per_epoch + 2}) {
    CAPTURE(stop);
    const Run first = train_run(config, comm, nullptr, stop, nullptr, graphs);
    CHECK(first.summary.steps == stop);
    const Run resumed = train_run(config, comm, &first.checkpoint, 0, nullptr, graphs);
    CHECK(resumed.summary.steps == uninterrupted.summary.steps);
    CHECK(at::equal(resumed.parameters, uninterrupted.parameters));  // bitwise
    CHECK(resumed.summary.test.loss == uninterrupted.summary.test.loss);
    CHECK(resumed.summary.train_loss == uninterrupted.summary.train_loss);
  }
}

TEST_CASE("resuming mid-epoch is bitwise exact: cnn (dropout RNG), SGD with momentum") {
  check_exact_resume(resume_config(config::Model::kCnn, config::Optimizer::kSgd));
}

TEST_CASE("resuming mid-epoch is bitwise exact: mlp, Adam") {
  check_exact_resume(resume_config(config::Model::kMlp, config::Optimizer::kAdam));
}

// Graphed steps (run eagerly on the CPU) keep their progress, rate and Adam's step count on the
// host, as eager steps do: a checkpoint between them resumes exactly too.
TEST_CASE("resuming graphed steps is bitwise exact: mlp, Adam, onecycle") {
  config::TrainConfig config = resume_config(config::Model::kMlp, config::Optimizer::kAdam);
  config.lr = 0.01;
  config.lr_schedule = config::Schedule::kOneCycle;
  GraphPlan graphs;
  graphs.capture = true;
  check_exact_resume(config, graphs);
}

// The rate of every step follows from the global step alone (Note [Learning-rate schedules]), so
// a run resumed mid-schedule continues with the same rates.
TEST_CASE("resuming mid-schedule is bitwise exact: mlp, Adam with its betas, onecycle") {
  config::TrainConfig config = resume_config(config::Model::kMlp, config::Optimizer::kAdam);
  config.lr = 0.01;
  config.adam_beta1 = 0.7;
  config.adam_beta2 = 0.9;
  config.lr_schedule = config::Schedule::kOneCycle;
  check_exact_resume(config);
}

TEST_CASE("resuming mid-schedule is bitwise exact: linear, SGD, cosine after a warm-up") {
  config::TrainConfig config = resume_config(config::Model::kLinear, config::Optimizer::kSgd);
  config.lr_schedule = config::Schedule::kCosine;
  config.warmup_steps = 3;
  check_exact_resume(config);
}

/// A communicator over the first `ranks` world ranks; MPI_COMM_NULL on the others.
MPI_Comm first_ranks(int ranks) {
  const distributed::World& world = testing::test_world();
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(world.comm(), world.rank() < ranks ? 0 : MPI_UNDEFINED, world.rank(), &comm);
  return comm;
}

TEST_CASE("a run with a learning-rate schedule resumes only with the world that wrote it") {
  const distributed::World& world = testing::test_world();
  config::TrainConfig config = resume_config(config::Model::kLinear, config::Optimizer::kSgd);
  config.lr_schedule = config::Schedule::kCosine;
  distributed::MpiCommunicator everyone(world.comm());
  const Run first = train_run(config, everyone, nullptr, /*stop_after=*/2);
  if (MPI_Comm comm = first_ranks(1); comm != MPI_COMM_NULL) {
    distributed::MpiCommunicator alone(comm);
    const std::string message = testing::error_message<CheckpointError>(
        [&] { train_run(config, alone, &first.checkpoint, 0); });
    INFO("message: ", message);
    CHECK(testing::contains(message, "written by " + std::to_string(world.size()) + " ranks"));
    CHECK(testing::contains(message, "--lr-schedule cosine spans "));
    CHECK(testing::contains(message, "resume with as many ranks, or give the run a"));
    MPI_Comm_free(&comm);
  }
}

// 24 images a step split over 1, 2, 3 or 4 ranks: 5 steps per epoch of the 97 images on each.
TEST_CASE("with --global-batch-size a scheduled run resumes on another world, schedule intact") {
  const distributed::World& world = testing::test_world();
  config::TrainConfig config = resume_config(config::Model::kLinear, config::Optimizer::kSgd);
  config.lr_schedule = config::Schedule::kOneCycle;
  config.global_batch_size = 24;
  config.batch_size = 24 / world.size();
  distributed::MpiCommunicator everyone(world.comm());
  const Run first = train_run(config, everyone, nullptr, /*stop_after=*/2);
  if (MPI_Comm comm = first_ranks(1); comm != MPI_COMM_NULL) {
    distributed::MpiCommunicator alone(comm);
    config.batch_size = 24;
    const Run resumed = train_run(config, alone, &first.checkpoint, 0);
    CHECK(resumed.summary.steps == 2 * 5);
    MPI_Comm_free(&comm);
  }
}

/// Trains `steps` steps on `from` ranks, resumes on `to` ranks for the rest of the epoch, and
/// counts how often each sample was trained on, over all ranks.
at::Tensor sample_counts(int from, int to, std::int64_t steps) {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator everyone(world.comm());
  config::TrainConfig config = resume_config(config::Model::kLinear, config::Optimizer::kSgd);
  config.epochs = 1;
  at::Tensor counts = at::zeros({kPaddedTrainSize}, at::kLong);
  const auto count = [&counts](const at::Tensor& indices) {
    counts.index_add_(0, indices, at::ones_like(indices));
  };

  std::string bytes;
  if (MPI_Comm comm = first_ranks(from); comm != MPI_COMM_NULL) {
    distributed::MpiCommunicator before(comm);
    bytes = checkpoint::encode_checkpoint(
        train_run(config, before, nullptr, steps, count).checkpoint.contents);
    MPI_Comm_free(&comm);
  }
  const checkpoint::LoadedCheckpoint saved = checkpoint::decode_training_checkpoint(
      distributed::broadcast_bytes(everyone, bytes), "broadcast");

  if (MPI_Comm comm = first_ranks(to); comm != MPI_COMM_NULL) {
    distributed::MpiCommunicator after(comm);
    const Run resumed = train_run(config, after, &saved, 0, count);
    CHECK(resumed.summary.steps > steps);
    MPI_Comm_free(&comm);
  }
  everyone.all_reduce(counts, distributed::ReduceOp::kSum);
  return counts;
}

/// Every sample once, except the wrap-around padding of the resumed world: the first `padding`
/// entries of the epoch's permutation, twice.
void check_elastic(int from, int to, std::int64_t steps) {
  CAPTURE(from);
  CAPTURE(to);
  const at::Tensor counts = sample_counts(from, to, steps);
  const std::int64_t position = steps * 8 * from;
  const std::int64_t remaining = kPaddedTrainSize - position;
  const std::int64_t padding = (remaining + to - 1) / to * to - remaining;
  at::Tensor expected = at::ones({kPaddedTrainSize}, at::kLong);
  const at::Tensor order = data::epoch_permutation(kPaddedTrainSize, /*seed=*/3, /*epoch=*/0);
  expected.index_add_(0, order.narrow(0, 0, padding), at::ones({padding}, at::kLong));
  CHECK(at::equal(counts, expected));
}

TEST_CASE("a checkpoint from 4 ranks resumes on 2 without skipping or repeating samples" *
          doctest::test_suite("at least 4 ranks")) {
  check_elastic(/*from=*/4, /*to=*/2, /*steps=*/2);
}

TEST_CASE("a checkpoint from 2 ranks resumes on 3 without skipping or repeating samples" *
          doctest::test_suite("at least 3 ranks")) {
  check_elastic(/*from=*/2, /*to=*/3, /*steps=*/3);
}

}  // namespace
}  // namespace mnist_ddp::train
