// lib/report/accuracy_milestones.hpp — provides: AccuracyMilestones, time to 90-99% test accuracy.
#pragma once

#include <cstdint>
#include <vector>

#include "train/train_reports.hpp"

namespace mnist_ddp::report {

struct Milestone {
  double accuracy = 0;  // 0..1
  bool reached = false;
  // Of the first evaluation at or above it:
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  double train_seconds = 0;  // training time in this process, evaluations excluded
};

/// The accuracies every MNIST user knows the meaning of.
class AccuracyMilestones {
 public:
  /// After each evaluation (epoch ends and --eval-every).
  void note(const train::EvalReport& report) {
    for (Milestone& m : milestones_) {
      if (m.reached || report.test.accuracy < m.accuracy) continue;
      m = Milestone{m.accuracy, true, report.epoch, report.step, report.train_seconds};
    }
  }
  const std::vector<Milestone>& milestones() const { return milestones_; }

 private:
  std::vector<Milestone> milestones_ = {{0.90}, {0.95}, {0.98}, {0.99}};
};

}  // namespace mnist_ddp::report
