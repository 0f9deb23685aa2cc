// lib/report/timeline.hpp — provides: Timeline, every rank's phases and collectives of a run as one
// Chrome trace (chrome://tracing, Perfetto), as Horovod's timeline: stragglers and
// communication gaps show at a glance.
#pragma once

#include <string>
#include <vector>

#include "config/step_range.hpp"
#include "distributed/communicator.hpp"
#include "distributed/rank_placement.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

class Timeline {
 public:
  /// Records the spans of the optimizer steps in `steps`. A disabled timeline records nothing
  /// and costs nothing.
  Timeline(distributed::Communicator& comm, bool enabled, config::StepRange steps);

  /// Collective: a barrier, so that every rank's clock starts at the same moment.
  void start();

  /// Records one span of this rank if its step is in the window (up to kMaxSpans; later ones
  /// are counted, not kept).
  void add(const train::Span& span);

  /// Collective: gathers every rank's spans; rank 0 writes the trace to `path` (atomically).
  /// Returns the spans dropped past kMaxSpans on all ranks (on rank 0; 0 elsewhere).
  std::int64_t write(const std::string& path,
                     const std::vector<distributed::RankPlacement>& layout);

  /// Spans kept per rank (20 MB of memory): a guard for wide --timeline-steps windows, 83,000
  /// steps of the linear model (5 phases and 1 bucket a step).
  static constexpr std::int64_t kMaxSpans = 500'000;

 private:
  distributed::Communicator& comm_;
  bool enabled_;
  config::StepRange steps_;
  train::TraceClock::time_point origin_;
  std::vector<double> spans_;  // kFields per span: name, start (us), duration (us), step, bytes
  std::int64_t dropped_ = 0;
};

}  // namespace mnist_ddp::report
