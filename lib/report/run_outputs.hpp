// lib/report/run_outputs.hpp — provides: RunOutputs, all a run shows and writes but checkpoints.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "config/train_config.hpp"
#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "report/accuracy_milestones.hpp"
#include "report/banner.hpp"
#include "report/metrics_writer.hpp"
#include "report/progress.hpp"
#include "report/run_report.hpp"
#include "report/tensorboard_writer.hpp"
#include "report/timeline.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

/// Every rank has one (the timeline and the summary gather from all ranks); rank 0 writes.
class RunOutputs {
 public:
  /// Opens rank 0's files (metrics appended when `resumed`), no collectives: make it once the run
  /// will train, so a failure leaves earlier outputs alone. UsageError names an unwritable option.
  RunOutputs(const config::TrainConfig& config, const distributed::DevicePlan& plan,
             distributed::Communicator& comm, const Log& log, bool resumed);

  /// Collective: call right before training.
  void start();

  void on_step(const train::StepReport& step);
  void on_epoch(const train::EpochReport& report);
  void on_evaluation(const train::EvalReport& report);
  void on_span(const train::Span& span) { timeline_.add(span); }

  /// Collective, after training: writes and prints the summaries; whether --min-accuracy was met.
  bool finish(const train::TrainSummary& summary, double wall_seconds, double startup_seconds);

 private:
  void write_report(const train::TrainSummary& summary, const std::vector<RankStats>& ranks,
                    double wall_seconds, double startup_seconds);

  const config::TrainConfig& config_;
  distributed::Communicator& comm_;
  const Log& log_;
  const std::vector<distributed::RankPlacement> layout_;
  Progress progress_;
  MetricsWriter metrics_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;  // rank 0 with --tensorboard-dir
  Timeline timeline_;
  AccuracyMilestones milestones_;
  RunReport report_;  // the curves so far, for --report
  train::TraceClock::time_point start_;
  std::int64_t steps_trained_ = 0;  // by this process (a resumed run counts from its start)
};

}  // namespace mnist_ddp::report
