// lib/run/training_run.cpp — a training run in its agreed phases; the stop signals.
#include "run/training_run.hpp"

#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "checkpoint/checkpoint_meta.hpp"
#include "checkpoint/checkpointer.hpp"
#include "checkpoint/training_checkpoint.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process_clock.hpp"
#include "config/options.hpp"
#include "data/mnist_dataset.hpp"
#include "distributed/agreement.hpp"
#include "distributed/session.hpp"
#include "model/classifier.hpp"
#include "model/model_export.hpp"
#include "report/banner.hpp"
#include "report/run_outputs.hpp"
#include "train/fault_injection.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::run {
namespace {

// sig_atomic_t: what a handler may write; volatile: the loop must not cache it.
volatile std::sig_atomic_t received_signal = 0;

extern "C" void remember_signal(int signal) { received_signal = signal; }

/// Whether a stop signal arrived since install_stop_handlers.
bool stop_requested() { return received_signal != 0; }

/// The training and test sets, as uint8 on the training device (batches are gathered there).
struct DataSets {
  data::Dataset train;
  data::Dataset test;
};

/// Collective, agreed: both splits of --data-dir, the same on every rank, at least one training
/// image per rank, then moved to `device`; `while_loading` runs inside the agreed load.
DataSets load_data_sets(const distributed::World& world, const config::TrainConfig& config,
                        c10::Device device, const std::function<void()>& while_loading) {
  DataSets sets;
  distributed::run_agreed(world, "loading the data", [&] {
    while_loading();
    sets.train = data::load_mnist(config.data_dir, data::Split::kTrain);
    sets.test = data::load_mnist(config.data_dir, data::Split::kTest);
    if (sets.train.size() < world.size()) {
      throw UsageError("more ranks (" + std::to_string(world.size()) + ") than training images (" +
                       std::to_string(sets.train.size()) + "); run with at most " +
                       std::to_string(sets.train.size()) + " ranks");
    }
  });
  // Ranks given other data would not meet, or would train one model on different data sets.
  distributed::run_agreed(world, "comparing the data sets", [&] {
    const std::string here = "training set " + data::fingerprint(sets.train) + ", test set " +
                             data::fingerprint(sets.test);
    const std::string rank0 = distributed::broadcast_bytes(world, here);
    if (here != rank0) {
      throw DataError(config.data_dir + " holds " + here + " on this rank but " + rank0 +
                      " on rank 0: every rank must train on the same data set");
    }
  });
  sets.train = sets.train.to(device);
  sets.test = sets.test.to(device);
  return sets;
}

/// --eval-only: the checkpoint's model on the test set.
int evaluate_checkpoint(const distributed::World& world, const config::TrainConfig& config,
                        const Log& log, const std::optional<checkpoint::LoadedCheckpoint>& saved,
                        model::Classifier& model, train::Trainer& trainer) {
  distributed::run_agreed(world, "reading the checkpoint to evaluate", [&] {
    if (!saved)
      throw CheckpointError("--eval-only: no checkpoint in '" + config.checkpoint_dir + "'");
    checkpoint::restore_model(*saved, config.model, model);
  });
  train::TrainSummary summary;
  summary.steps = saved->meta.progress.step;
  summary.test = trainer.evaluate_test_set();
  log.line("# eval-only: test_loss %.6f", summary.test.loss);
  return report::print_summary(log, summary, config.min_accuracy, /*wall_seconds=*/0) ? 0 : 1;
}

/// What the run does around the trainer's steps: outputs, checkpoints, faults, stop signals.
train::TrainerHooks make_hooks(const config::TrainConfig& config, train::Trainer& trainer,
                               report::RunOutputs& outputs, checkpoint::Checkpointer& checkpointer,
                               train::FaultInjector& faults, double& startup_seconds) {
  train::TrainerHooks hooks;
  hooks.on_epoch = [&](const train::EpochReport& report) {
    outputs.on_epoch(report);
    checkpointer.note_epoch(
        {report.epoch, report.train_loss, report.test.loss, report.test.accuracy});
  };
  hooks.on_evaluation = [&](const train::EvalReport& report) { outputs.on_evaluation(report); };
  hooks.on_step = [&](const train::StepReport& step) {
    outputs.on_step(step);
    faults.after_step(step.step);
  };
  if (!config.timeline.empty())
    hooks.on_span = [&](const train::Span& span) { outputs.on_span(span); };
  hooks.on_checkpoint = [&](checkpoint::CheckpointPoint point) {
    checkpointer.save(point, [&trainer] { return trainer.checkpoint(); });
  };
  hooks.stop_requested = stop_requested;
  hooks.on_first_step = [&startup_seconds] { startup_seconds = seconds_since_process_start(); };
  hooks.in_capture = [&faults] { faults.while_capturing(); };
  return hooks;
}

/// After training: the preemption exit, the exported model, the summary and its exit code.
int finish_run(const distributed::World& world, const config::TrainConfig& config, const Log& log,
               const train::TrainSummary& summary, model::Classifier& model,
               report::RunOutputs& outputs, double startup_seconds) {
  if (summary.preempted) {
    log.line("# stopped by a signal after step %lld%s; exit %d: resume with --resume auto",
             static_cast<long long>(summary.steps),
             config.checkpoint_dir.empty() ? " (no --checkpoint-dir: nothing saved)"
                                           : ", checkpoint written",
             static_cast<int>(ExitCode::kPreempted));
    return static_cast<int>(ExitCode::kPreempted);
  }
  if (!config.export_model.empty()) {
    distributed::run_agreed(world, "exporting the model", [&] {
      if (world.rank() == 0) {
        model.to(at::kCPU);  // so that the file loads on machines without a GPU
        model::export_model(model, config.export_model);
      }
    });
    log.line("# model exported to %s", config.export_model.c_str());
  }
  const double wall = seconds_since_process_start();  // the origin of startup_seconds too
  // Agreed, so that every rank ends together, only once rank 0 has written the run's outputs: a
  // launcher may end the other ranks soon after the first one exits (slurm/mnist_ddp.sbatch).
  bool accurate_enough = false;
  distributed::run_agreed(world, "writing the run's outputs", [&] {
    accurate_enough = outputs.finish(summary, wall, startup_seconds);
  });
  return static_cast<int>(accurate_enough ? ExitCode::kOk : ExitCode::kFailure);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // system calls in progress (file writes) carry on
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

int run_training(const distributed::World& world, const config::TrainConfig& config) {
  const Log log(world.rank(), config.log_all_ranks);
  if (world.rank() == 0) {
    for (const std::string& warning : config::environment_warnings()) {
      std::fprintf(stderr, "mnist_ddp: warning: %s\n", warning.c_str());
    }
  }

  // The same options everywhere, then one plan from every rank's capability (Note [One plan for
  // every rank]); then the communicator, whose set-up is collective and fails on every rank alike.
  distributed::run_agreed(world, "comparing the options",
                          [&] { distributed::check_same_options(world, config); });
  const distributed::Session session =
      distributed::open_session(world, config::device_request(config));
  const distributed::DevicePlan& plan = session.plan;
  distributed::Communicator& comm = *session.communicator;
  train::GraphPlan graphs;
  distributed::run_agreed(world, "planning CUDA graphs",
                          [&] { graphs = train::plan_cuda_graph(config, plan); });
  graphs.after_replay = session.after_replay;
  std::unique_ptr<train::FaultInjector> faults;  // MNIST_DDP_FAULT, a testing aid
  const DataSets data = load_data_sets(world, config, plan.device, [&] {
    faults = std::make_unique<train::FaultInjector>(world.rank(), world.host());
    faults->while_loading();
  });

  report::print_banner(log, config);
  report::print_execution(log, plan, config, graphs);
  report::print_layout(log, plan.layout, world.node_count());

  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const std::shared_ptr<model::Classifier> model = model::make_model(config.model);
  model->to(plan.device);
  train::Trainer trainer(config, plan, comm, *model, data.train, data.test, graphs);
  checkpoint::Checkpointer checkpointer(config, world, comm, log);
  const std::optional<checkpoint::LoadedCheckpoint> saved = checkpointer.load();
  if (config.eval_only) {
    return evaluate_checkpoint(world, config, log, saved, *model, trainer);
  }
  if (saved)
    distributed::run_agreed(world, "restoring the checkpoint", [&] { trainer.restore(*saved); });
  // A stop asked for during the start-up ends every rank before anything is trained or written.
  distributed::run_agreed(world, "starting the training", [] {
    if (stop_requested()) {
      throw Error(ExitCode::kPreempted,
                  "stopped by a signal before the first step: nothing was trained or written");
    }
  });
  // Only now, so that a run that cannot start leaves the outputs of earlier runs as they were.
  std::unique_ptr<report::RunOutputs> outputs;
  distributed::run_agreed(world, "opening the run's outputs", [&] {
    outputs = std::make_unique<report::RunOutputs>(config, plan, comm, log,
                                                   /*resumed=*/saved.has_value());
  });
  log.line("# data: %lld training images, %lld test images; %lld steps per epoch on each rank",
           static_cast<long long>(data.train.size()), static_cast<long long>(data.test.size()),
           static_cast<long long>(trainer.steps_per_epoch()));

  double startup_seconds = 0;
  const train::TrainerHooks hooks =
      make_hooks(config, trainer, *outputs, checkpointer, *faults, startup_seconds);
  outputs->start();
  report::print_epoch_header(log);
  const train::TrainSummary summary = trainer.run(hooks);
  return finish_run(world, config, log, summary, *model, *outputs, startup_seconds);
}

}  // namespace mnist_ddp::run
