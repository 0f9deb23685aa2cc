// lib/report/banner.hpp — provides: RankStats; the start banner and result tables, '#'-prefixed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/log.hpp"
#include "config/train_config.hpp"
#include "distributed/device_plan.hpp"
#include "report/accuracy_milestones.hpp"
#include "train/graphed_step.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

/// One rank's run, as gathered for the rank table.
struct RankStats {
  int rank = 0;
  std::int64_t steps = 0;   // optimizer steps trained by this process
  std::int64_t images = 0;  // images trained by this rank
  train::PhaseTimes phases;
  double peak_rss_mib = 0;  // the process's peak resident memory

  double images_per_sec() const { return images / std::max(phases.total(), 1e-12); }
  double step_seconds() const { return phases.total() / std::max<std::int64_t>(1, steps); }
};

/// Versions, then every setting of `config`, one per line.
void print_banner(const Log& log, const config::TrainConfig& config);

/// Mode, device, precision, gradient transport, the plan's note and the CUDA graph decision.
void print_execution(const Log& log, const distributed::DevicePlan& plan,
                     const config::TrainConfig& config, const train::GraphPlan& graphs);

/// One line per rank, in rank order, with the number of nodes.
void print_layout(const Log& log, const std::vector<distributed::RankPlacement>& layout,
                  int node_count);

/// The header of the per-epoch table, with units.
void print_epoch_header(const Log& log);
void print_epoch(const Log& log, const train::EpochReport& report);

/// "# final test_acc 81.23% OK" and the totals; returns whether --min-accuracy was met.
bool print_summary(const Log& log, const train::TrainSummary& summary, double min_accuracy,
                   double wall_seconds);

/// Start-up time and the shares of this rank's training time (rank 0's unless every rank logs).
void print_timing(const Log& log, int rank, double startup_seconds,
                  const train::PhaseTimes& phases);

/// One line per rank (throughput, step time, comm share, peak memory), the slowest marked.
void print_rank_table(const Log& log, const std::vector<RankStats>& ranks,
                      const std::vector<distributed::RankPlacement>& layout);

/// When the test accuracy first reached each milestone (and which it never reached).
void print_milestones(const Log& log, const std::vector<Milestone>& milestones);

/// With --target-accuracy: the step and times at which it was reached, or that it was not.
void print_target(const Log& log, double target_accuracy, const train::TrainSummary& summary);

}  // namespace mnist_ddp::report
