// lib/report/timeline.hpp — provides: Timeline, every rank's phases and collectives of a run as one
// Chrome trace (chrome://tracing, Perfetto), as Horovod's timeline: stragglers and
// communication gaps show at a glance.
#pragma once

#include <string>
#include <vector>

#include "distributed/communicator.hpp"
#include "distributed/rank_placement.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

class Timeline {
 public:
  /// A disabled timeline records nothing and costs nothing.
  Timeline(distributed::Communicator& comm, bool enabled);

  /// Collective: a barrier, so that every rank's clock starts at the same moment.
  void start();

  /// Records one span of this rank (up to kMaxSpans; later ones are counted, not kept).
  void add(const train::Span& span);

  /// Collective: gathers every rank's spans; rank 0 writes the trace to `path` (atomically).
  void write(const std::string& path, const std::vector<distributed::RankPlacement>& layout);

  /// Spans kept per rank: 20 MB of memory, an hour of the linear model at 1,000 steps/s.
  static constexpr std::int64_t kMaxSpans = 500'000;

 private:
  distributed::Communicator& comm_;
  bool enabled_;
  train::TraceClock::time_point origin_;
  std::vector<double> spans_;  // kFields per span: name, start (us), duration (us), step, bytes
  std::int64_t dropped_ = 0;
};

}  // namespace mnist_ddp::report
