// tests/unit/test_step.cpp — Step: eager and graphed steps (a graphed step's body runs eagerly on
// the CPU) keep the same books (step, position, learning rate, shard), report their phases as
// spans that add up to the step's time, and agree to stop on a rank's request.
#include <doctest/doctest.h>

#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "support/cpu_plan.hpp"
#include "support/mirror_communicator.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/device_optimizer.hpp"
#include "train/step.hpp"

namespace mnist_ddp::train {
namespace {

constexpr std::int64_t kShard = 40;  // two full batches of 16 and a partial one of 8

config::TrainConfig step_config() {
  config::TrainConfig config;
  config.batch_size = 16;
  config.lr = 0.1;
  config.lr_schedule = config::Schedule::kCosine;
  config.warmup_steps = 2;
  return config;
}

/// A Step over a linear model, on a world of `ranks` mirrored ranks, its shard started.
struct Setup {
  explicit Setup(bool graphed, int ranks = 1, bool communicates = false,
                 config::TrainConfig options = step_config())
      : config(std::move(options)), comm(ranks) {
    torch::manual_seed(1);
    model = model::make_model(config.model);
    optimizer = make_optimizer(config, model->parameters());
    distributed::DevicePlan plan = testing::cpu_plan(comm);
    plan.communicates = communicates;
    GraphPlan graphs;
    graphs.capture = graphed;
    step = std::make_unique<Step>(config, plan, comm, *model, train_set, *optimizer,
                                  /*total_steps=*/10, kShard, metrics, progress, graphs);
    step->start_epoch(at::arange(kShard, at::kLong));
  }

  config::TrainConfig config;
  testing::MirrorCommunicator comm;
  data::Dataset train_set = testing::synthetic_dataset(kShard, /*seed=*/3);
  std::shared_ptr<model::Classifier> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  RunMetrics metrics{c10::Device(c10::kCPU), comm};
  checkpoint::TrainProgress progress;
  std::unique_ptr<Step> step;
};

struct Traced {
  std::vector<std::string> names;
  double seconds = 0;
};

TEST_CASE("step: eager and graphed steps advance step, position and shard and take the rate") {
  const LrSchedule schedule(config::Schedule::kCosine, 0.1, 2, 10);
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    Setup setup(graphed, /*ranks=*/3);
    setup.progress.position = 6;  // a resumed epoch continues from its position
    const std::vector<std::int64_t> images = {16, 16, 8};
    for (size_t k = 0; k < images.size(); ++k) {
      CAPTURE(k);
      const StepResult step = setup.step->run(TrainerHooks{});
      CHECK(step.graphed == (graphed && k < 2));  // the partial batch runs eagerly
      CHECK(step.images == images[k]);
      CHECK(step.lr == schedule.lr_at(static_cast<std::int64_t>(k)));
      CHECK(setup.progress.step == static_cast<std::int64_t>(k) + 1);
      CHECK(setup.step->samples_left() ==
            kShard - std::accumulate(images.begin(), images.begin() + k + 1, std::int64_t{0}));
    }
    CHECK(setup.progress.position == 6 + 3 * kShard);  // every rank's images
  }
}

TEST_CASE("step: an eager step trains up to --grad-accum batches, the last maybe partial") {
  config::TrainConfig config = step_config();
  config.grad_accum = 2;
  Setup setup(/*graphed=*/false, /*ranks=*/1, /*communicates=*/false, config);
  std::vector<std::int64_t> batch_sizes;
  TrainerHooks hooks;
  hooks.on_batch = [&](const at::Tensor& indices) { batch_sizes.push_back(indices.size(0)); };
  const StepResult first = setup.step->run(hooks);
  CHECK(first.micro_batches == 2);
  CHECK(first.images == 32);
  const StepResult last = setup.step->run(hooks);
  CHECK(last.micro_batches == 1);
  CHECK(last.images == 8);
  CHECK(batch_sizes == std::vector<std::int64_t>{16, 16, 8});
  CHECK(setup.progress.step == 2);
  CHECK(setup.step->samples_left() == 0);
}

TEST_CASE("step: eager and graphed steps train alike and add each loss once") {
  std::vector<at::Tensor> parameters;
  std::vector<double> losses;
  for (const bool graphed : {false, true}) {
    Setup setup(graphed);
    for (int k = 0; k < 3; ++k) {
      const StepResult step = setup.step->run(TrainerHooks{});
      CHECK(step.micro_batches == 1);
      setup.metrics.add_step(step.images, step.micro_batches, step.phases);
    }
    const LogWindow window = setup.metrics.take_window();
    losses.push_back(window.loss);
    std::vector<at::Tensor> flat;
    for (const at::Tensor& p : setup.model->parameters()) flat.push_back(p.detach().flatten());
    parameters.push_back(at::cat(flat));
  }
  CHECK(losses[0] > 0.5);
  CHECK(losses[1] == losses[0]);
  CHECK(at::equal(parameters[1], parameters[0]));
}

TEST_CASE("step: a graphed step's spans are launch and device, adding up to its time") {
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    Setup setup(graphed);
    Traced traced;
    TrainerHooks hooks;
    std::int64_t span_step = 0;
    hooks.on_span = [&](const Span& span) {
      traced.names.emplace_back(span.name);
      traced.seconds += std::chrono::duration<double>(span.end - span.start).count();
      span_step = span.step;
    };
    StepResult step = setup.step->run(hooks);
    CHECK(setup.step->stop_agreed(step, /*device_read_follows=*/true, hooks) ==
          ddp::StopReason::kNone);
    CHECK(span_step == 1);
    if (graphed) {
      CHECK(traced.names == std::vector<std::string>{"launch", "device"});
      CHECK(step.phases.graphed());
      CHECK(step.phases[train::Phase::kLaunch] > 0);
      CHECK(step.phases[train::Phase::kData] + step.phases[train::Phase::kForward] +
                step.phases[train::Phase::kCommWait] ==
            0);
      CHECK(traced.seconds == doctest::Approx(step.phases.total()).epsilon(1e-12));
    } else {
      // The eager step's phases; on the CPU nothing is queued, so it has no drain.
      CHECK(traced.names ==
            std::vector<std::string>{"data", "forward", "backward", "comm_wait", "optimizer"});
      CHECK_FALSE(step.phases.graphed());
      CHECK(traced.seconds <= step.phases.total());
    }
  }
}

TEST_CASE("step: an eager step that communicates reports its allreduces, a graphed one none") {
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    Setup setup(graphed, /*ranks=*/1, /*communicates=*/true);
    int allreduces = 0;
    TrainerHooks hooks;
    hooks.on_span = [&](const Span& span) { allreduces += std::string(span.name) == "allreduce"; };
    setup.step->run(hooks);
    CHECK(allreduces == (graphed ? 0 : 1));  // the linear model's one bucket
  }
  Setup alone(/*graphed=*/false);  // no collectives where the ranks do not communicate
  int spans = 0;
  TrainerHooks hooks;
  hooks.on_span = [&](const Span& span) { spans += std::string(span.name) == "allreduce"; };
  alone.step->run(hooks);
  CHECK(spans == 0);
}

TEST_CASE("step: a stop asked for before a step is agreed on after it") {
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    Setup setup(graphed);
    TrainerHooks hooks;
    StepResult first = setup.step->run(hooks);
    CHECK(setup.step->stop_agreed(first, /*device_read_follows=*/false, hooks) ==
          ddp::StopReason::kNone);
    hooks.stop_requested = [] { return true; };
    StepResult second = setup.step->run(hooks);
    CHECK(setup.step->stop_agreed(second, /*device_read_follows=*/false, hooks) ==
          ddp::StopReason::kRequested);
  }
}

/// Trains three epochs (two full batches and a partial one each), with `in_capture` in the hooks;
/// returns the parameters and whether each step was graphed.
at::Tensor train_epochs(Setup& setup, const std::function<void()>& in_capture,
                        std::vector<bool>& graphed) {
  TrainerHooks hooks;
  hooks.in_capture = in_capture;
  for (int epoch = 0; epoch < 3; ++epoch) {
    if (epoch > 0) setup.step->start_epoch(at::arange(kShard, at::kLong));
    while (setup.step->samples_left() > 0) graphed.push_back(setup.step->run(hooks).graphed);
  }
  std::vector<at::Tensor> flat;
  for (const at::Tensor& p : setup.model->parameters()) flat.push_back(p.detach().flatten());
  return at::cat(flat);
}

TEST_CASE("step: a failed capture under --cuda-graph auto trains that step and the rest eagerly") {
  Setup eager(/*graphed=*/false);
  std::vector<bool> eager_graphed;
  const at::Tensor expected = train_epochs(eager, {}, eager_graphed);

  Setup setup(/*graphed=*/true);
  int captures = 0;
  std::vector<bool> graphed;
  const at::Tensor trained = train_epochs(
      setup,
      [&] {
        ++captures;
        throw std::runtime_error("planted");
      },
      graphed);
  CHECK(captures == 1);
  // Three warm-up steps (the partial batches are eager), then the capture fails at the fourth.
  CHECK(graphed == std::vector<bool>{true, true, false, true, false, false, false, false, false});
  CHECK(setup.step->graph_fallback() == "rank 0: planted");
  CHECK(at::equal(trained, expected));
  CHECK(setup.progress.step == 9);
}

TEST_CASE("step: a capture that works replays; a failed one under --cuda-graph on ends the run") {
  Setup works(/*graphed=*/true);
  int captures = 0;
  std::vector<bool> graphed;
  train_epochs(
      works, [&] { ++captures; }, graphed);
  CHECK(captures == 1);
  CHECK(graphed == std::vector<bool>{true, true, false, true, true, false, true, true, false});
  CHECK(works.step->graph_fallback().empty());

  config::TrainConfig config = step_config();
  config.cuda_graph = config::CudaGraph::kOn;
  Setup required(/*graphed=*/true, /*ranks=*/2, /*communicates=*/false, config);
  std::vector<bool> unused;
  try {
    train_epochs(
        required, [] { throw std::runtime_error("planted"); }, unused);
    FAIL("the failed capture did not end the run");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kFailure);
    CHECK(std::string(e.what()) ==
          "capturing the training step as a CUDA graph failed on rank 0: planted (--cuda-graph off "
          "trains without one)");
  }
}

}  // namespace
}  // namespace mnist_ddp::train
