// lib/report/rank_stats.hpp — provides: RankStats, gather_rank_stats: each rank's run, in order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "distributed/communicator.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

struct RankStats {
  int rank = 0;
  std::int64_t steps = 0;   // optimizer steps trained by this process
  std::int64_t images = 0;  // images trained by this rank
  train::PhaseTimes phases;
  double peak_rss_mib = 0;  // the process's peak resident memory

  double images_per_sec() const { return images / std::max(phases.total(), 1e-12); }
  double step_seconds() const { return phases.total() / std::max<std::int64_t>(1, steps); }
};

/// This process's peak resident set size, in MiB.
double peak_rss_mib();

/// Collective: every rank's statistics for the run summarised by `summary`, in rank order.
std::vector<RankStats> gather_rank_stats(distributed::Communicator& comm,
                                         const train::TrainSummary& summary,
                                         std::int64_t steps_trained);

}  // namespace mnist_ddp::report
