// lib/io/run_outputs.cpp — wiring of the trainer's callbacks to the outputs.
#include "io/run_outputs.hpp"

#include <unistd.h>

#include <filesystem>

#include "common/error.hpp"
#include "io/banner.hpp"
#include "io/rank_stats.hpp"

namespace mnist_ddp::io {

void require_writable_location(const std::string& path, const char* option) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const std::string shown = folder.empty() ? "." : folder.string();
  if (access(shown.c_str(), W_OK) != 0) {
    throw UsageError(std::string("--") + option + " '" + path + "': folder '" + shown +
                     "' does not exist or is not writable");
  }
}

namespace {

std::string on_rank_zero(const dist::Communicator& comm, const std::string& path,
                         const char* option) {
  if (comm.rank() != 0 || path.empty()) return "";
  require_writable_location(path, option);
  return path;
}

}  // namespace

RunOutputs::RunOutputs(const config::TrainConfig& config, dist::Communicator& comm, const Log& log)
    : config_(config),
      comm_(comm),
      log_(log),
      progress_(log, comm.rank() == 0 ? progress_style(config.progress) : ProgressStyle::kOff),
      metrics_(on_rank_zero(comm, config.metrics_file, "metrics-file"),
               RunFacts{comm.size(), comm.backend(), config.model, config.lr}),
      timeline_(comm, !config.timeline.empty()) {
  on_rank_zero(comm, config.timeline, "timeline");
}

void RunOutputs::start(std::vector<dist::RankPlacement> layout) {
  layout_ = std::move(layout);
  timeline_.start();
}

void RunOutputs::on_step(const train::StepReport& step) {
  ++steps_trained_;
  progress_.on_step(step);
  metrics_.write_step(step);
}

void RunOutputs::on_epoch(const train::EpochReport& report) {
  print_epoch(log_, report);
  metrics_.write_epoch(report);
  milestones_.note(report);
}

bool RunOutputs::finish(const train::TrainSummary& summary, double wall_seconds,
                        double startup_seconds) {
  const std::vector<RankStats> ranks = gather_rank_stats(comm_, summary, steps_trained_);
  timeline_.write(config_.timeline, layout_);
  metrics_.write_summary(summary, wall_seconds, startup_seconds);
  print_timing(log_, startup_seconds, summary.phases);
  print_rank_table(log_, ranks, layout_);
  print_milestones(log_, milestones_.milestones());
  if (!config_.timeline.empty()) log_.line("# timeline written to %s", config_.timeline.c_str());
  return print_summary(log_, summary, config_.min_accuracy, wall_seconds);
}

}  // namespace mnist_ddp::io
