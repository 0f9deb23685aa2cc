// lib/report/accuracy_milestones.hpp — provides: AccuracyMilestones, when the test accuracy first
// reached 90%, 95%, 98%, 99%: the time-to-accuracy figure training benchmarks compare.
#pragma once

#include <cstdint>
#include <vector>

#include "train/train_reports.hpp"

namespace mnist_ddp::report {

struct Milestone {
  double accuracy = 0;  // 0..1
  bool reached = false;
  std::int64_t epoch = 0;      // the first epoch at or above it
  double elapsed_seconds = 0;  // since training started in this process
};

class AccuracyMilestones {
 public:
  AccuracyMilestones();
  /// After each epoch's evaluation.
  void note(const train::EpochReport& report);
  const std::vector<Milestone>& milestones() const { return milestones_; }

 private:
  std::vector<Milestone> milestones_;
};

}  // namespace mnist_ddp::report
