// tests/unit/test_trainer.cpp — the training loop on one rank: evaluations and checkpoints at
// epoch ends and every N steps, log windows, --max-steps, --target-accuracy and an agreed stop.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include <torch/utils.h>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "support/cpu_plan.hpp"
#include "support/mirror_communicator.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {
namespace {

using checkpoint::CheckpointPoint;

/// Two epochs of 3 steps (40 images in batches of 16).
config::TrainConfig loop_config() {
  config::TrainConfig config;
  config.epochs = 2;
  config.batch_size = 16;
  config.log_every = 0;
  return config;
}

/// A checkpoint point and the step it came after.
using Checkpoint = std::pair<int, std::int64_t>;
Checkpoint at(CheckpointPoint point, std::int64_t step) { return {static_cast<int>(point), step}; }

/// What the loop called back, in order.
struct Calls {
  std::vector<Checkpoint> checkpoints;
  std::vector<std::int64_t> evaluations;                       // steps
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;  // step, steps in it
  std::vector<EpochReport> epochs;
  std::vector<std::vector<std::int64_t>> batches;  // each step's sample indices
  TrainSummary summary;
};

/// Runs the loop, its callbacks recorded in `calls` (also where the loop throws); `after_step`
/// gets the model after each step's report.
void run_into(
    Calls& calls, const config::TrainConfig& config,
    std::function<bool()> stop_requested = [] { return false; },
    const std::function<void(model::Classifier&)>& after_step = nullptr) {
  testing::MirrorCommunicator comm;
  const data::Dataset train_set = testing::synthetic_dataset(40, /*seed=*/1);
  const data::Dataset test_set = testing::synthetic_dataset(20, /*seed=*/2);
  torch::manual_seed(1);
  const auto model = model::make_model(config.model);
  Trainer trainer(config, testing::cpu_plan(comm), comm, *model, train_set, test_set);
  TrainerHooks hooks;
  hooks.on_checkpoint = [&](CheckpointPoint point) {
    calls.checkpoints.push_back(at(point, trainer.progress().step));
  };
  hooks.on_evaluation = [&](const EvalReport& report) { calls.evaluations.push_back(report.step); };
  hooks.on_step = [&](const StepReport& step) {
    if (step.window) calls.windows.emplace_back(step.step, step.window->steps);
    if (after_step) after_step(*model);
  };
  hooks.on_epoch = [&](const EpochReport& report) { calls.epochs.push_back(report); };
  hooks.on_batch = [&](const at::Tensor& indices) {
    const at::Tensor cpu = indices.to(at::kCPU).contiguous();
    calls.batches.emplace_back(cpu.data_ptr<std::int64_t>(),
                               cpu.data_ptr<std::int64_t>() + cpu.numel());
  };
  hooks.stop_requested = std::move(stop_requested);
  calls.summary = trainer.run(hooks);
}

Calls run(
    const config::TrainConfig& config,
    std::function<bool()> stop_requested = [] { return false; }) {
  Calls calls;
  run_into(calls, config, std::move(stop_requested));
  return calls;
}

TEST_CASE("loop: an evaluation and a checkpoint at each epoch's end and every N steps between") {
  config::TrainConfig config = loop_config();
  config.checkpoint_every = 2;
  config.eval_every = 2;
  const Calls calls = run(config);
  // Step 6 ends the second epoch: its end's checkpoint and evaluation stand for both.
  CHECK(calls.checkpoints == std::vector<Checkpoint>{at(CheckpointPoint::kEveryNSteps, 2),
                                                     at(CheckpointPoint::kEpochEnd, 3),
                                                     at(CheckpointPoint::kEveryNSteps, 4),
                                                     at(CheckpointPoint::kEpochEnd, 6)});
  CHECK(calls.evaluations == std::vector<std::int64_t>{2, 3, 4, 6});
  REQUIRE(calls.epochs.size() == 2);
  CHECK(calls.epochs[1].step == 6);
  CHECK(calls.epochs[1].complete);
  CHECK(calls.epochs[1].images == 40);
  CHECK(calls.summary.steps == 6);
  CHECK_FALSE(calls.summary.preempted);
  CHECK(calls.summary.test.accuracy == calls.epochs[1].test.accuracy);
}

TEST_CASE("loop: each epoch draws another order of the whole shard (the sampler's set_epoch)") {
  const Calls calls = run(loop_config());
  REQUIRE(calls.batches.size() == 6);  // 16 + 16 + 8 images, twice
  std::vector<std::vector<std::int64_t>> epochs(2);
  for (size_t step = 0; step < calls.batches.size(); ++step) {
    std::vector<std::int64_t>& order = epochs[step / 3];
    order.insert(order.end(), calls.batches[step].begin(), calls.batches[step].end());
  }
  CHECK(epochs[0] != epochs[1]);
  for (std::vector<std::int64_t> order : epochs) {
    std::sort(order.begin(), order.end());
    std::vector<std::int64_t> all(40);
    std::iota(all.begin(), all.end(), 0);
    CHECK(order == all);
  }
}

TEST_CASE("loop: a log window every --log-every steps holds the steps since the last") {
  config::TrainConfig config = loop_config();
  config.log_every = 4;
  using Windows = std::vector<std::pair<std::int64_t, std::int64_t>>;
  CHECK(run(config).windows == Windows{{4, 4}});
  config.log_every = 2;
  CHECK(run(config).windows == Windows{{2, 2}, {4, 2}, {6, 2}});
}

TEST_CASE("loop: --max-steps ends mid-epoch, evaluated, the epoch reported incomplete") {
  config::TrainConfig config = loop_config();
  config.max_steps = 4;
  const Calls calls = run(config);
  CHECK(calls.summary.steps == 4);
  REQUIRE(calls.epochs.size() == 2);
  CHECK(calls.epochs[0].complete);
  CHECK_FALSE(calls.epochs[1].complete);
  CHECK(calls.epochs[1].images == 16);
  CHECK(calls.evaluations == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("loop: the first evaluation at --target-accuracy ends the run with a checkpoint") {
  config::TrainConfig config = loop_config();
  config.eval_every = 1;
  config.target_accuracy = 0.01;  // any trained network's
  const Calls calls = run(config);
  REQUIRE(calls.summary.target.has_value());
  CHECK(calls.summary.target->step == 1);
  CHECK(calls.summary.steps == 1);
  CHECK(calls.evaluations == std::vector<std::int64_t>{1});
  REQUIRE(calls.epochs.size() == 1);
  CHECK(calls.epochs[0].target_reached);
  CHECK(calls.checkpoints.back() == at(CheckpointPoint::kTargetReached, 1));
}

TEST_CASE("loop: a stop request ends the run after its step, with a checkpoint") {
  int asked = 0;
  const Calls calls = run(loop_config(), [&] { return ++asked >= 2; });
  CHECK(calls.summary.preempted);
  CHECK(calls.summary.steps == 2);  // the request of step 2 rides on its gradients
  CHECK(calls.epochs.empty());
  REQUIRE(calls.checkpoints.size() == 1);
  CHECK(calls.checkpoints[0] == at(CheckpointPoint::kStop, 2));
}

/// The run's AgreedFailure code; 0 where it ended normally.
int failure_code(Calls& calls, const config::TrainConfig& config,
                 const std::function<void(model::Classifier&)>& after_step = nullptr) {
  try {
    run_into(
        calls, config, [] { return false; }, after_step);
  } catch (const distributed::AgreedFailure& failure) {
    return failure.code;
  }
  return 0;
}

TEST_CASE("loop: a loss that is not finite ends the run, agreed, with no checkpoint after it") {
  config::TrainConfig config = loop_config();
  config.checkpoint_every = 1;
  config.lr = 1e37;  // step 1's weights are finite, step 2's loss is not
  Calls calls;
  CHECK(failure_code(calls, config) == static_cast<int>(ExitCode::kNotFinite));
  CHECK(calls.checkpoints == std::vector<Checkpoint>{at(CheckpointPoint::kEveryNSteps, 1)});
  CHECK(calls.epochs.empty());
}

TEST_CASE("loop: weights that are not finite are never checkpointed") {
  config::TrainConfig config = loop_config();
  config.checkpoint_every = 1;
  Calls calls;
  const auto poison = [](model::Classifier& model) {
    torch::NoGradGuard no_grad;
    model.parameters()[0].view(-1)[0] = std::numeric_limits<float>::infinity();
  };
  CHECK(failure_code(calls, config, poison) == static_cast<int>(ExitCode::kNotFinite));
  CHECK(calls.checkpoints.empty());
}

}  // namespace
}  // namespace mnist_ddp::train
