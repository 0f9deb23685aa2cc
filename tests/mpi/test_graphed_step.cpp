// tests/mpi/test_graphed_step.cpp — the device work of a graphed step (Note [The step as one CUDA
// graph]), run eagerly on the CPU, trains exactly as the eager step: same batches, parameters,
// losses and stop decisions, at any world size.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "data/batch_maker.hpp"
#include "data/shard_cursor.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/staging_communicator.hpp"
#include "model/classifier.hpp"
#include "model/dropout.hpp"
#include "support/cpu_plan.hpp"
#include "support/flat_parameters.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/device_optimizer.hpp"
#include "train/graphed_step.hpp"
#include "train/trainer.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/nccl_communicator.hpp"
#endif

namespace mnist_ddp::train {
namespace {

// Not a multiple of the global batch at 2, 3 or 4 ranks: every epoch ends in a partial batch,
// which runs eagerly beside the graphed steps.
constexpr std::int64_t kTrainSize = 212;

struct Outcome {
  at::Tensor parameters;
  std::vector<at::Tensor> batches;
  TrainSummary summary;
};

Outcome train(config::TrainConfig config, bool graphed, TrainerHooks hooks = {}) {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const data::Dataset train_set = testing::synthetic_dataset(kTrainSize, /*seed=*/21);
  const data::Dataset test_set = testing::synthetic_dataset(40, /*seed=*/22);
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const auto model = model::make_model(config.model);
  GraphPlan graphs;
  graphs.capture = graphed;
  Trainer trainer(config, testing::cpu_plan(comm), comm, *model, train_set, test_set, graphs);
  Outcome outcome;
  hooks.on_batch = [&](const at::Tensor& indices) { outcome.batches.push_back(indices.clone()); };
  outcome.summary = trainer.run(hooks);
  outcome.parameters = testing::flat_parameters(*model);
  return outcome;
}

void check_same_training(const config::TrainConfig& config) {
  const Outcome eager = train(config, /*graphed=*/false);
  const Outcome graphed = train(config, /*graphed=*/true);
  REQUIRE(eager.batches.size() == graphed.batches.size());
  for (size_t i = 0; i < eager.batches.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(eager.batches[i], graphed.batches[i]));
  }
  CHECK(eager.summary.steps == graphed.summary.steps);
  CHECK(eager.summary.train_loss == graphed.summary.train_loss);
  CHECK(eager.summary.test.loss == graphed.summary.test.loss);
  const double difference = (eager.parameters - graphed.parameters).abs().max().item<double>();
  CAPTURE(difference);
  CHECK(difference == 0);
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  std::vector<at::Tensor> initial;
  for (const at::Tensor& p : model::make_model(config.model)->parameters()) {
    initial.push_back(p.detach().reshape({-1}));
  }
  CHECK((graphed.parameters - at::cat(initial)).abs().max().item<double>() > 1e-3);
}

config::TrainConfig base_config() {
  config::TrainConfig config;
  config.epochs = 2;
  config.batch_size = 16;
  config.seed = 5;
  config.log_every = 0;
  return config;
}

/// The mlp with Adam and a one-cycle schedule: a rate and bias corrections that change every step.
config::TrainConfig adam_onecycle_config() {
  config::TrainConfig config = base_config();
  config.model = config::Model::kMlp;
  config.optimizer = config::Optimizer::kAdam;
  config.lr = 0.003;
  config.lr_schedule = config::Schedule::kOneCycle;
  return config;
}

TEST_CASE("graphed steps train as eager ones: mlp, Adam, one-cycle schedule, weight decay") {
  config::TrainConfig config = adam_onecycle_config();
  config.weight_decay = 1e-4;
  check_same_training(config);
}

TEST_CASE("graphed steps train as eager ones: cnn with dropout, SGD with momentum, bf16 wire") {
  config::TrainConfig config = base_config();
  config.model = config::Model::kCnn;
  config.epochs = 1;
  config.lr = 0.02;
  config.momentum = 0.9;
  config.weight_decay = 5e-4;
  config.grad_dtype = config::GradDtype::kBf16;
  check_same_training(config);
}

TEST_CASE("graphed steps report as eager ones: log windows, rates, mid-epoch evaluations") {
  config::TrainConfig config = adam_onecycle_config();
  config.log_every = 2;
  config.eval_every = 3;
  struct Reports {
    std::vector<double> window_losses;
    std::vector<double> rates;
    std::vector<std::int64_t> evaluation_steps;
    std::vector<double> evaluation_losses;
  };
  const auto reported = [&](bool graphed) {
    Reports reports;
    TrainerHooks hooks;
    hooks.on_step = [&](const StepReport& step) {
      reports.rates.push_back(step.lr);
      if (step.window) reports.window_losses.push_back(step.window->loss);
    };
    hooks.on_evaluation = [&](const EvalReport& evaluation) {
      reports.evaluation_steps.push_back(evaluation.step);
      reports.evaluation_losses.push_back(evaluation.test.loss);
    };
    train(config, graphed, hooks);
    return reports;
  };
  const Reports eager = reported(/*graphed=*/false);
  const Reports graphed = reported(/*graphed=*/true);
  // Every window (the loss sums the device keeps), every rate and every evaluation, exactly.
  CHECK(eager.window_losses.size() > 2);
  CHECK(graphed.window_losses == eager.window_losses);
  CHECK(graphed.rates == eager.rates);
  CHECK(eager.evaluation_steps.size() > 2);
  CHECK(graphed.evaluation_steps == eager.evaluation_steps);
  CHECK(graphed.evaluation_losses == eager.evaluation_losses);
}

TEST_CASE("a log window as long as the epoch reports the epoch's training loss") {
  const distributed::World& world = testing::test_world();
  config::TrainConfig config = adam_onecycle_config();
  config.epochs = 1;
  const std::int64_t per_rank = (kTrainSize + world.size() - 1) / world.size();
  config.log_every = (per_rank + config.batch_size - 1) / config.batch_size;  // the epoch's steps
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    std::vector<double> window_losses;
    double epoch_loss = 0;
    TrainerHooks hooks;
    hooks.on_step = [&](const StepReport& step) {
      if (step.window) window_losses.push_back(step.window->loss);
    };
    hooks.on_epoch = [&](const EpochReport& epoch) { epoch_loss = epoch.train_loss; };
    train(config, graphed, hooks);
    // The two sums of every loss, one per tally (Note [One add for both loss sums]).
    REQUIRE(window_losses.size() == 1);
    CHECK(epoch_loss > 0.1);
    CHECK(window_losses[0] == doctest::Approx(epoch_loss).epsilon(1e-12));
  }
}

TEST_CASE("a graphed step's spans are its launch and device wait; the partial batch has its own") {
  config::TrainConfig config = base_config();
  config.model = config::Model::kLinear;
  config.epochs = 1;
  std::vector<std::string> names;
  TrainerHooks hooks;
  hooks.on_span = [&](const Span& span) { names.emplace_back(span.name); };
  const Outcome outcome = train(config, /*graphed=*/true, hooks);
  const distributed::World& world = testing::test_world();
  const std::int64_t per_rank = (kTrainSize + world.size() - 1) / world.size();
  const std::int64_t full = per_rank / config.batch_size;
  REQUIRE(outcome.summary.steps == full + (per_rank % config.batch_size != 0 ? 1 : 0));
  const auto count = [&](const char* name) { return std::count(names.begin(), names.end(), name); };
  CHECK(count("launch") == full);
  CHECK(count("device") == full);
  CHECK(count("forward") == outcome.summary.steps - full);  // the eager partial step's phases
  CHECK(count("optimizer") == outcome.summary.steps - full);
  // One bucket (the linear model's), timed in the eager step only: a replay's would be the
  // capture's.
  CHECK(count("allreduce") == (world.size() > 1 ? outcome.summary.steps - full : 0));
}

TEST_CASE("a graphed trainer refuses --grad-accum, which plan_cuda_graph keeps eager") {
  config::TrainConfig config = base_config();
  config.model = config::Model::kLinear;
  config.grad_accum = 2;
  CHECK_THROWS_WITH(train(config, /*graphed=*/true),
                    doctest::Contains("a graphed step is one micro-batch on one device"));
}

TEST_CASE("a capture failed on some ranks: every rank trains eagerly, as an eager run does") {
  const distributed::World& world = testing::test_world();
  config::TrainConfig config = adam_onecycle_config();
  const Outcome eager = train(config, /*graphed=*/false);
  TrainerHooks hooks;
  hooks.in_capture = [&] {  // fails on rank 1 and the last rank: rank 1's reason is everyone's
    if (world.rank() == 1 || world.rank() == world.size() - 1) {
      throw std::runtime_error("planted on rank " + std::to_string(world.rank()));
    }
  };
  const Outcome fell_back = train(config, /*graphed=*/true, hooks);
  CHECK(fell_back.summary.graph_fallback == "rank 1: planted on rank 1");
  CHECK(fell_back.summary.steps == eager.summary.steps);
  CHECK(fell_back.summary.test.loss == eager.summary.test.loss);
  CHECK(at::equal(fell_back.parameters, eager.parameters));

  config.cuda_graph = config::CudaGraph::kOn;
  CHECK_THROWS_WITH(train(config, /*graphed=*/true, hooks),
                    "capturing the training step as a CUDA graph failed on rank 1: planted on rank "
                    "1 (--cuda-graph off trains without one)");
}

TEST_CASE("a stop asked for on one rank ends graphed and eager runs at the same step") {
  const distributed::World& world = testing::test_world();
  config::TrainConfig config = base_config();
  config.model = config::Model::kLinear;
  config.lr = 0.05;
  for (const bool graphed : {false, true}) {
    CAPTURE(graphed);
    int steps_seen = 0;
    TrainerHooks hooks;
    hooks.stop_requested = [&] { return world.rank() == world.size() - 1 && steps_seen++ >= 3; };
    const Outcome outcome = train(config, graphed, hooks);
    CHECK(outcome.summary.preempted);
    CHECK(outcome.summary.steps == 4);  // the request of step 4 rides on its gradients
  }
}

TEST_CASE("a replayed step draws fresh dropout masks on every replay" *
          doctest::test_suite("gpu")) {
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const TrainingStream stream(at::Device(at::kCUDA), /*captured_steps=*/true);
  const at::Tensor ones = at::ones({4096}, at::TensorOptions().device(at::kCUDA));
  const at::Tensor mask = at::zeros_like(ones);
  GraphedStep step([&] { mask.copy_(model::inverted_dropout(ones, 0.5, /*training=*/true)); },
                   ones.device(), alone, /*warmup_steps=*/1, /*required=*/true);
  std::vector<at::Tensor> masks;
  for (int run = 0; run < 4; ++run) {
    step.run({});
    masks.push_back(mask.cpu());
  }
  CHECK(step.replaying());
  for (int run = 1; run < 4; ++run) {
    CAPTURE(run);
    CHECK_FALSE(at::equal(masks[run], masks[run - 1]));
    const double kept = masks[run].gt(0).to(at::kDouble).mean().item<double>();
    CHECK(kept > 0.45);
    CHECK(kept < 0.55);
  }
}

TEST_CASE("a replayed step gathers each replay's batch as the CPU makes it, bit for bit" *
          doctest::test_suite("gpu")) {
  // The shard cursor's positions advance on the device, and the inputs come from the normalized
  // copy of the data set (Note [A normalized copy on the GPU]): each replay must read the next
  // batch, with the values of the CPU's one-pass normalization.
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const TrainingStream stream(at::Device(at::kCUDA), /*captured_steps=*/true);
  constexpr std::int64_t kBatch = 8;
  const data::Dataset cpu_set = testing::synthetic_dataset(100, /*seed=*/31);
  const data::Dataset cuda_set{cpu_set.images.cuda(), cpu_set.labels.cuda()};
  const data::BatchMaker cpu_batches(cpu_set, 0.1307, 0.3081);
  const data::BatchMaker cuda_batches(cuda_set, 0.1307, 0.3081);
  const at::Tensor shard = at::randperm(100, at::kLong);
  data::ShardCursor cursor(kBatch, shard.size(0), at::Device(at::kCUDA));
  cursor.start(shard.cuda());
  at::Tensor inputs;
  at::Tensor targets;
  GraphedStep step(
      [&] {
        const data::Batch batch = cuda_batches.make(cursor.next());
        if (!inputs.defined()) {  // allocated in a warm-up, so replays write the same memory
          inputs = at::empty_like(batch.inputs);
          targets = at::empty_like(batch.targets);
        }
        inputs.copy_(batch.inputs);
        targets.copy_(batch.targets);
      },
      at::Device(at::kCUDA), alone, /*warmup_steps=*/1, /*required=*/true);
  for (std::int64_t b = 0; b < shard.size(0) / kBatch; ++b) {
    CAPTURE(b);
    step.run({});
    const data::Batch expected = cpu_batches.make(shard.narrow(0, b * kBatch, kBatch));
    CHECK(at::equal(inputs.cpu(), expected.inputs));
    CHECK(at::equal(targets.cpu(), expected.targets));
  }
  CHECK(step.replaying());
}

TEST_CASE("a replayed optimizer step takes LibTorch's steps with each replay's rate" *
          doctest::test_suite("gpu")) {
  // On the GPU the update is the fused Adam or SGD kernel where LibTorch has it (Note [Fused
  // optimizer kernels]): captured once, it must read the rate and Adam's step count that
  // prepare() leaves before each replay, and keep a channels-last weight's layout.
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const TrainingStream stream(at::Device(at::kCUDA), /*captured_steps=*/true);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  for (const config::Optimizer optimizer : {config::Optimizer::kSgd, config::Optimizer::kAdam}) {
    CAPTURE(config::to_string(optimizer));
    config::TrainConfig config;
    config.optimizer = optimizer;
    config.momentum = 0.9;
    config.weight_decay = 0.01;
    const auto fresh = [&] {
      at::manual_seed(5);
      return std::vector<at::Tensor>{
          at::randn({8, 4, 3, 3}, cuda).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_(),
          at::randn({8}, cuda).requires_grad_()};
    };
    const std::vector<at::Tensor> reference = fresh();
    const std::vector<at::Tensor> ours = fresh();
    const auto reference_optimizer = make_optimizer(config, reference);
    const auto our_optimizer = make_optimizer(config, ours);
    DeviceOptimizer device(*our_optimizer);
    // The gradients live in fixed memory, as in the reducer's buckets; each step writes new ones.
    for (const at::Tensor& p : ours) p.mutable_grad() = at::zeros_like(p);
    GraphedStep step([&] { device.apply(); }, at::Device(at::kCUDA), alone, /*warmup_steps=*/2,
                     /*required=*/true);
    for (int k = 0; k < 10; ++k) {
      const double lr = 0.01 / (1 + k);
      for (size_t i = 0; i < ours.size(); ++i) {
        at::manual_seed(100 + 10 * k + static_cast<int>(i));
        const at::Tensor grad = at::randn(ours[i].sizes(), cuda);
        reference[i].mutable_grad() = grad.contiguous(ours[i].suggest_memory_format());
        ours[i].grad().copy_(grad);
      }
      for (auto& group : reference_optimizer->param_groups()) group.options().set_lr(lr);
      reference_optimizer->step();
      device.prepare(lr);
      step.run({});
    }
    CHECK(step.replaying());
    for (size_t i = 0; i < ours.size(); ++i) {
      CAPTURE(i);
      const double scale = reference[i].abs().max().item<double>();
      CHECK((ours[i] - reference[i]).abs().max().item<double>() <= 1e-5 * scale);
      CHECK(ours[i].is_contiguous(reference[i].suggest_memory_format()));
    }
  }
}

#if MNIST_DDP_HAVE_NCCL
TEST_CASE("a replayed trainer step holds its bucket allreduces when it communicates alone" *
          doctest::test_suite("gpu")) {
  // The program hands the trainer its NCCL transport wrapped in a StagingCommunicator, and the
  // capture must still reach NCCL (Note [Collectives in a captured step]); the trainer's gradient
  // hooks must be made on its side stream (Note [One stream for a captured training]). With
  // --communicate-alone each bucket's allreduce is in the captured step, so its graph has more
  // nodes than the same step's without; over one rank the training is the same. Each rank trains
  // alone (an NCCL communicator of its own), whatever the world size.
  const int gpu = testing::test_world().local_rank() % static_cast<int>(at::getNumGPUs());
  const c10::Device device(c10::kCUDA, static_cast<c10::DeviceIndex>(gpu));
  const auto on_device = [&](const data::Dataset& set) {
    return data::Dataset{set.images.to(device), set.labels.to(device)};
  };
  const data::Dataset train_set = on_device(testing::synthetic_dataset(kTrainSize, /*seed=*/21));
  const data::Dataset test_set = on_device(testing::synthetic_dataset(40, /*seed=*/22));
  const auto train_on_nccl = [&](bool alone, std::int64_t& nodes) {
    distributed::MpiWatchdog mpi_self(MPI_COMM_SELF, testing::kCommTimeoutSeconds);
    auto nccl = std::make_unique<distributed::NcclCommunicator>(mpi_self, gpu,
                                                                testing::kCommTimeoutSeconds);
    distributed::NcclCommunicator* watched = nccl.get();
    distributed::StagingCommunicator comm(std::move(nccl), device);
    config::TrainConfig config = adam_onecycle_config();
    // An fp32 bucket is averaged (ncclAvg): over one rank NCCL still launches its scaling kernel,
    // a node of the graph, where an in-place sum of another wire type would launch nothing.
    config.grad_dtype = config::GradDtype::kFp32;
    torch::manual_seed(static_cast<std::uint64_t>(config.seed));
    const auto model = model::make_model(config.model);
    model->to(device);
    distributed::DevicePlan plan;
    plan.device = device;
    plan.backend = config::Backend::kNccl;
    plan.communicates = alone;  // as decide_plan makes it for one rank with --communicate-alone
    GraphPlan graphs;
    graphs.capture = true;
    graphs.after_replay = [watched] { watched->watch_caller_stream("replay"); };  // as a Session's
    Trainer trainer(config, plan, comm, *model, train_set, test_set, graphs);
    nodes = trainer.run({}).graph_nodes;
    return testing::flat_parameters(*model).cpu();
  };
  std::int64_t plain_nodes = 0;
  std::int64_t alone_nodes = 0;
  const at::Tensor plain = train_on_nccl(/*alone=*/false, plain_nodes);
  const at::Tensor alone = train_on_nccl(/*alone=*/true, alone_nodes);
  CAPTURE(plain_nodes);
  CAPTURE(alone_nodes);
  CHECK(plain_nodes > 0);
  CHECK(alone_nodes > plain_nodes);
  const double scale = plain.abs().max().item<double>();
  CHECK((alone - plain).abs().max().item<double>() <= 1e-5 * scale);
}
#endif

}  // namespace
}  // namespace mnist_ddp::train
