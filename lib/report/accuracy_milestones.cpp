// lib/report/accuracy_milestones.cpp — the accuracies every MNIST user knows the meaning of.
#include "report/accuracy_milestones.hpp"

namespace mnist_ddp::report {

AccuracyMilestones::AccuracyMilestones() {
  for (double accuracy : {0.90, 0.95, 0.98, 0.99}) milestones_.push_back({accuracy});
}

void AccuracyMilestones::note(const train::EvalReport& report) {
  for (Milestone& m : milestones_) {
    if (m.reached || report.test.accuracy < m.accuracy) continue;
    m = Milestone{m.accuracy, true, report.epoch, report.step, report.train_seconds};
  }
}

}  // namespace mnist_ddp::report
