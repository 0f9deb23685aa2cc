// lib/report/run_outputs.cpp — wiring of the trainer's callbacks to the outputs.
#include "report/run_outputs.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include <ATen/ATen.h>

#include "common/atomic_file.hpp"
#include "common/process_clock.hpp"
#include "config/options.hpp"

namespace mnist_ddp::report {
namespace {

/// This process's peak resident set size, in MiB.
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

/// Collective: every rank's statistics, in rank order, from one all_gather of float64 values.
std::vector<RankStats> gather_rank_stats(distributed::Communicator& comm,
                                         const train::TrainSummary& summary,
                                         std::int64_t steps_trained) {
  std::vector<double> mine = {static_cast<double>(steps_trained),
                              static_cast<double>(summary.images) / comm.size(), peak_rss_mib()};
  mine.insert(mine.end(), summary.phases.seconds.begin(), summary.phases.seconds.end());
  const at::Tensor all = comm.all_gather(at::tensor(mine, at::kDouble)).contiguous();
  std::vector<RankStats> stats;
  for (int rank = 0; rank < comm.size(); ++rank) {
    const auto* v = all[rank].data_ptr<double>();
    RankStats s;
    s.rank = rank;
    s.steps = static_cast<std::int64_t>(v[0]);
    s.images = static_cast<std::int64_t>(v[1]);
    s.peak_rss_mib = v[2];
    std::copy_n(v + 3, train::kPhaseCount, s.phases.seconds.begin());
    stats.push_back(s);
  }
  return stats;
}

/// Rank 0's --metrics-file, once every output's folder is known writable (else UsageError): before
/// training, so a typo costs no run, and before emptying the file, so a refusal leaves it alone.
std::string checked_metrics_file(const distributed::Communicator& comm,
                                 const config::TrainConfig& config) {
  if (comm.rank() != 0) return "";
  const std::pair<const std::string&, const char*> files[] = {
      {config.metrics_file, "metrics-file"},
      {config.timeline, "timeline"},
      {config.report, "report"},
      {config.export_model, "export-model"}};
  for (const auto& [path, option] : files) {
    if (path.empty()) continue;
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    require_writable_folder(folder.empty() ? "." : folder.string(),
                            std::string("--") + option + " '" + path + "'");
  }
  return config.metrics_file;
}

}  // namespace

RunOutputs::RunOutputs(const config::TrainConfig& config, const distributed::DevicePlan& plan,
                       distributed::Communicator& comm, const Log& log, bool resumed)
    : config_(config),
      comm_(comm),
      log_(log),
      layout_(plan.layout),
      progress_(log, comm.rank() == 0 ? progress_style(config.progress) : config::Progress::kOff),
      metrics_(checked_metrics_file(comm, config),
               RunFacts{comm.size(), comm.backend(), plan.on_cuda() ? "cuda" : "cpu",
                        config::to_string(config.mode), config::to_string(config.precision),
                        config::to_string(config.model), config.target_accuracy},
               /*append=*/resumed),
      timeline_(comm, !config.timeline.empty(), config.timeline_steps) {
  if (comm.rank() == 0 && !config.tensorboard_dir.empty())
    tensorboard_ = std::make_unique<TensorBoardWriter>(config.tensorboard_dir);
}

void RunOutputs::start() {
  timeline_.start();
  start_ = train::TraceClock::now();
}

void RunOutputs::on_step(const train::StepReport& step) {
  ++steps_trained_;
  progress_.on_step(step);
  metrics_.write_step(step);
  if (!step.window) return;
  const train::LogWindow& w = *step.window;
  if (tensorboard_) {
    tensorboard_->add_scalar("train/loss", step.step, w.loss);
    tensorboard_->add_scalar("train/images_per_sec", step.step, w.images_per_sec);
    // Unknown in a window of graphed steps, whose collectives are not timed.
    if (const std::optional<double> share = w.phases.comm_share())
      tensorboard_->add_scalar("train/comm_share", step.step, *share);
    tensorboard_->add_scalar("train/lr", step.step, step.lr);
  }
  report_.steps.push_back({step.step, seconds_since(start_), w.loss, w.images_per_sec});
}

void RunOutputs::on_evaluation(const train::EvalReport& report) {
  metrics_.write_evaluation(report);
  milestones_.note(report);
  report_.evaluations.push_back({report.step, report.test.loss, report.test.accuracy});
  if (tensorboard_) {
    tensorboard_->add_scalar("eval/test_loss", report.step, report.test.loss);
    tensorboard_->add_scalar("eval/test_accuracy", report.step, report.test.accuracy);
  }
}

void RunOutputs::on_epoch(const train::EpochReport& report) {
  print_epoch(log_, report);
  metrics_.write_epoch(report);
  if (tensorboard_) {
    tensorboard_->add_scalar("epoch/train_loss", report.step, report.train_loss);
    tensorboard_->add_scalar("epoch/test_loss", report.step, report.test.loss);
    tensorboard_->add_scalar("epoch/test_accuracy", report.step, report.test.accuracy);
    tensorboard_->add_scalar("epoch/images_per_sec", report.step, report.images_per_sec);
  }
  report_.epochs.push_back({report.step, report.train_loss, report.test.loss, report.test.accuracy,
                            report.images_per_sec, report.elapsed_seconds});
}

bool RunOutputs::finish(const train::TrainSummary& summary, double wall_seconds,
                        double startup_seconds) {
  const std::vector<RankStats> ranks = gather_rank_stats(comm_, summary, steps_trained_);
  const std::int64_t spans_dropped = timeline_.write(config_.timeline, layout_);
  metrics_.write_summary(summary, wall_seconds, startup_seconds);
  print_timing(log_, comm_.rank(), startup_seconds, summary.phases);
  print_rank_table(log_, ranks, layout_);
  print_milestones(log_, milestones_.milestones());
  print_target(log_, config_.target_accuracy, summary);
  if (!config_.timeline.empty()) {
    log_.line("# timeline of steps %s written to %s",
              config::to_string(config_.timeline_steps).c_str(), config_.timeline.c_str());
  }
  if (spans_dropped > 0) {
    log_.line(
        "# timeline: %lld spans past the cap of %lld per rank left out; narrow --timeline-steps",
        static_cast<long long>(spans_dropped), static_cast<long long>(Timeline::kMaxSpans));
  }
  if (comm_.rank() == 0 && !config_.report.empty()) {
    write_report(summary, ranks, wall_seconds, startup_seconds);
    log_.line("# report written to %s", config_.report.c_str());
  }
  return print_summary(log_, summary, config_.min_accuracy, wall_seconds);
}

void RunOutputs::write_report(const train::TrainSummary& summary,
                              const std::vector<RankStats>& ranks, double wall_seconds,
                              double startup_seconds) {
  report_.title = "mnist_ddp " + config::to_string(config_.model) + ", " +
                  std::to_string(comm_.size()) + " rank" + (comm_.size() == 1 ? "" : "s");
  report_.config = config::describe_config(config_);
  for (const RankStats& r : ranks) {
    const distributed::RankPlacement placement =
        r.rank < static_cast<int>(layout_.size()) ? layout_[r.rank] : distributed::RankPlacement{};
    report_.ranks.push_back({r.rank, placement.host, placement.local_rank, placement.device,
                             r.steps, r.step_seconds(), r.phases});
  }
  auto& rows = report_.summary;
  rows.emplace_back("final test accuracy",
                    string_printf("%.2f%% (%lld/%lld)", 100 * summary.test.accuracy,
                                  static_cast<long long>(summary.test.correct),
                                  static_cast<long long>(summary.test.count)));
  rows.emplace_back("final test loss", string_printf("%.6f", summary.test.loss));
  rows.emplace_back("optimizer steps", std::to_string(summary.steps));
  rows.emplace_back("throughput", string_printf("%.0f img/s (all ranks)", summary.images_per_sec));
  rows.emplace_back("wall time", string_printf("%.2f s (first step after %.2f s)", wall_seconds,
                                               startup_seconds));
  for (const Milestone& m : milestones_.milestones()) {
    if (!m.reached) continue;
    rows.emplace_back(
        "time to " + std::to_string(static_cast<int>(100 * m.accuracy)) + "% test accuracy",
        string_printf("%.2f s of training (step %lld, epoch %lld)", m.train_seconds,
                      static_cast<long long>(m.step), static_cast<long long>(m.epoch)));
  }
  write_run_report(config_.report, report_);
}

}  // namespace mnist_ddp::report
