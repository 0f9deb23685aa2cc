// app/mnist_ddp.cpp — the program: start the world -> parse options -> load data -> train ->
// summarise -> exit code. Errors in phases every rank runs are agreed on (same exit code
// everywhere); any other error aborts the whole job so no rank waits forever.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include <torch/torch.h>

#include "common/error.hpp"
#include "common/heap_reuse.hpp"
#include "common/process_clock.hpp"
#include "config/options.hpp"
#include "data/mnist_dataset.hpp"
#include "dist/agreed_failure.hpp"
#include "dist/device_plan.hpp"
#include "dist/layout.hpp"
#include "dist/make_communicator.hpp"
#include "dist/world.hpp"
#include "io/banner.hpp"
#include "io/log.hpp"
#include "io/model_export.hpp"
#include "io/run_outputs.hpp"
#include "io/versions.hpp"
#include "model/classifier.hpp"
#include "train/checkpointer.hpp"
#include "train/fault_injection.hpp"
#include "train/stop_request.hpp"
#include "train/trainer.hpp"
#include "train/training_checkpoint.hpp"

namespace {

using namespace mnist_ddp;
using Clock = std::chrono::steady_clock;

/// --threads 0: share the node's cores evenly among its ranks.
int intra_op_threads(const config::TrainConfig& config, const dist::World& world) {
  if (config.threads > 0) return config.threads;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / world.local_size());
}

/// --eval-only: the checkpoint's model on the test set.
int evaluate_checkpoint(const dist::World& world, const config::TrainConfig& config,
                        const io::Log& log, const std::optional<io::CheckpointContents>& saved,
                        model::Classifier& model, const data::Dataset& test_set,
                        dist::Communicator& comm) {
  dist::run_agreed(world, [&] {
    if (!saved)
      throw CheckpointError("--eval-only: no checkpoint in '" + config.checkpoint_dir + "'");
    train::restore_model(*saved, config.model, model);
  });
  const data::BatchMaker batches(test_set, config.normalize_mean, config.normalize_std);
  train::TrainSummary summary;
  summary.steps = saved->meta.value("progress", nlohmann::json::object()).value("step", 0LL);
  summary.test = train::evaluate(model, test_set, batches, comm, config.test_batch_size,
                                 config.precision == "bf16");
  log.line("# eval-only: test_loss %.6f", summary.test.loss);
  return io::print_summary(log, summary, config.min_accuracy, /*wall_seconds=*/0) ? 0 : 1;
}

int run_training(const dist::World& world, const config::TrainConfig& config,
                 Clock::time_point start) {
  const int threads = intra_op_threads(config, world);
  torch::set_num_threads(threads);
  const io::Log log(world.rank(), config.log_all_ranks);

  // Local checks first, agreed; then the communicator, whose set-up is collective and fails on
  // every rank alike.
  dist::DevicePlan plan;
  dist::run_agreed(world, [&] { plan = dist::plan_devices(config, world); });
  std::unique_ptr<dist::Communicator> communicator;
  dist::run_agreed(
      world, [&] { communicator = dist::make_communicator(world, plan, config.comm_timeout); });
  dist::Communicator& comm = *communicator;

  data::Dataset train_set;
  data::Dataset test_set;
  std::unique_ptr<io::RunOutputs> outputs;
  std::unique_ptr<train::FaultInjector> faults;  // MNIST_DDP_FAULT, a testing aid
  dist::run_agreed(world, [&] {
    train_set = data::load_mnist(config.data_dir, data::Split::kTrain);
    test_set = data::load_mnist(config.data_dir, data::Split::kTest);
    if (train_set.size() < world.size()) {
      throw UsageError("more ranks (" + std::to_string(world.size()) + ") than training images (" +
                       std::to_string(train_set.size()) + "); run with at most " +
                       std::to_string(train_set.size()) + " ranks");
    }
    outputs = std::make_unique<io::RunOutputs>(config, plan, comm, log);
    faults = std::make_unique<train::FaultInjector>(world.rank(), world.host());
  });
  // The whole data set goes to the training device once, as uint8; batches are gathered there.
  train_set = train_set.to(plan.device);
  test_set = test_set.to(plan.device);

  io::print_banner(log, config);
  io::print_execution(log, plan, config);
  const std::vector<dist::RankPlacement> layout =
      dist::gather_layout(world, plan.device_text, threads);
  io::print_layout(log, layout, world.node_count());

  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const std::shared_ptr<model::Classifier> model = model::make_model(config.model);
  model->to(plan.device);
  train::Trainer trainer(config, plan, comm, *model, train_set, test_set);
  train::Checkpointer checkpointer(config, world, comm, log);
  const std::optional<io::CheckpointContents> saved = checkpointer.load();
  if (config.eval_only) {
    return evaluate_checkpoint(world, config, log, saved, *model, test_set, comm);
  }
  if (saved) dist::run_agreed(world, [&] { trainer.restore(*saved); });
  log.line("# data: %lld training images, %lld test images; %lld steps per epoch on each rank",
           static_cast<long long>(train_set.size()), static_cast<long long>(test_set.size()),
           static_cast<long long>(trainer.steps_per_epoch()));

  train::install_stop_handlers();
  train::TrainerHooks hooks;
  hooks.on_epoch = [&](const train::EpochReport& report) {
    outputs->on_epoch(report);
    checkpointer.note_epoch(report);
  };
  hooks.on_step = [&](const train::StepReport& step) {
    outputs->on_step(step);
    faults->after_step(step.step);
  };
  if (!config.timeline.empty())
    hooks.on_span = [&](const train::Span& span) { outputs->on_span(span); };
  hooks.on_checkpoint = [&](train::CheckpointPoint point) { checkpointer.save(trainer, point); };
  hooks.stop_requested = train::stop_requested;
  double startup_seconds = 0;
  hooks.on_first_step = [&startup_seconds] { startup_seconds = seconds_since_process_start(); };

  outputs->start(layout);
  io::print_epoch_header(log);
  const train::TrainSummary summary = trainer.run(hooks);
  if (summary.preempted) {
    log.line("# stopped by a signal after step %lld%s; exit %d: resume with --resume auto",
             static_cast<long long>(summary.steps),
             config.checkpoint_dir.empty() ? " (no --checkpoint-dir: nothing saved)"
                                           : ", checkpoint written",
             static_cast<int>(ExitCode::kPreempted));
    return static_cast<int>(ExitCode::kPreempted);
  }
  if (!config.export_model.empty()) {
    dist::run_agreed(world, [&] {
      if (world.rank() == 0) {
        model->to(at::kCPU);  // so that the file loads on machines without a GPU
        io::export_model(*model, config.export_model);
      }
    });
    log.line("# model exported to %s", config.export_model.c_str());
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const bool accurate_enough = outputs->finish(summary, wall, startup_seconds);
  return static_cast<int>(accurate_enough ? ExitCode::kOk : ExitCode::kFailure);
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point start = Clock::now();
  keep_freed_memory_for_reuse();  // a refusal only costs speed
  dist::World world(&argc, &argv);
  try {
    config::Command command;
    dist::run_agreed(world, [&] { command = config::parse_command(argc, argv); });
    switch (command.action) {
      case config::Action::kHelp:
        if (world.rank() == 0) std::printf("%s", config::help_text().c_str());
        return 0;
      case config::Action::kVersion:
        if (world.rank() == 0) {
          for (const auto& [component, version] : io::component_versions()) {
            std::printf("%-10s %s\n", component.c_str(), version.c_str());
          }
        }
        return 0;
      case config::Action::kTrain:
        return run_training(world, command.config, start);
    }
  } catch (const dist::AgreedFailure& failure) {
    return failure.code;  // already reported by the rank that saw it
  } catch (const std::exception& error) {
    // Other ranks may be inside a collective this rank will never join: end them all.
    world.abort(dist::report_error(world, error));
  }
  return static_cast<int>(ExitCode::kFailure);
}
