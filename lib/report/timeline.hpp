// lib/report/timeline.hpp — provides: Timeline, every rank's spans as one Chrome trace.
#pragma once

#include <string>
#include <vector>

#include "config/options.hpp"
#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

class Timeline {
 public:
  /// Records the spans of the steps in `steps`; a disabled one costs nothing.
  Timeline(distributed::Communicator& comm, bool enabled, config::StepRange steps)
      : comm_(comm), enabled_(enabled), steps_(steps) {}

  /// Collective: a barrier, so that every rank's clock starts at the same moment.
  void start();

  /// Records a span of this rank in the window; past kMaxSpans they are only counted.
  void add(const train::Span& span);

  /// Collective: rank 0 writes all spans to `path` atomically; returns all ranks' drops (else 0).
  std::int64_t write(const std::string& path,
                     const std::vector<distributed::RankPlacement>& layout);

  /// Spans kept per rank: bounds memory (20 MB) for wide --timeline-steps windows.
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
