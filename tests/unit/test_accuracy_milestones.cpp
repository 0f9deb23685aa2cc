// tests/unit/test_accuracy_milestones.cpp — the first evaluation at or above each accuracy counts,
// with its step, epoch and training time.
#include <doctest/doctest.h>

#include "report/accuracy_milestones.hpp"

namespace mnist_ddp::report {
namespace {

train::EvalReport evaluation(std::int64_t epoch, std::int64_t step, double accuracy,
                             double train_seconds) {
  train::EvalReport report;
  report.epoch = epoch;
  report.step = step;
  report.test.accuracy = accuracy;
  report.train_seconds = train_seconds;
  report.elapsed_seconds = 10 * train_seconds;  // not what a milestone records
  return report;
}

TEST_CASE("milestones record the first evaluation that reached them") {
  AccuracyMilestones milestones;
  milestones.note(evaluation(1, 50, 0.85, 1.5));
  milestones.note(evaluation(1, 100, 0.96, 3.0));
  milestones.note(evaluation(2, 150, 0.95, 4.5));  // a dip does not move a milestone
  milestones.note(evaluation(2, 200, 0.981, 6.0));
  const std::vector<Milestone>& m = milestones.milestones();
  REQUIRE(m.size() == 4);
  CHECK(m[0].accuracy == 0.90);
  CHECK(m[0].reached);
  CHECK(m[0].epoch == 1);
  CHECK(m[0].step == 100);
  CHECK(m[0].train_seconds == 3.0);
  CHECK(m[1].step == 100);
  CHECK(m[2].reached);
  CHECK(m[2].epoch == 2);
  CHECK(m[2].step == 200);
  CHECK(m[2].train_seconds == 6.0);
  CHECK_FALSE(m[3].reached);
}

}  // namespace
}  // namespace mnist_ddp::report
