// tests/unit/test_accuracy_milestones.cpp — the first epoch at or above each accuracy counts.
#include <doctest/doctest.h>

#include "report/accuracy_milestones.hpp"

namespace mnist_ddp::report {
namespace {

train::EpochReport epoch(std::int64_t number, double accuracy, double elapsed) {
  train::EpochReport report;
  report.epoch = number;
  report.test.accuracy = accuracy;
  report.elapsed_seconds = elapsed;
  return report;
}

TEST_CASE("milestones record the first epoch that reached them") {
  AccuracyMilestones milestones;
  milestones.note(epoch(1, 0.85, 1.5));
  milestones.note(epoch(2, 0.96, 3.0));
  milestones.note(epoch(3, 0.95, 4.5));  // a dip does not move a milestone
  milestones.note(epoch(4, 0.981, 6.0));
  const std::vector<Milestone>& m = milestones.milestones();
  REQUIRE(m.size() == 4);
  CHECK(m[0].accuracy == 0.90);
  CHECK(m[0].reached);
  CHECK(m[0].epoch == 2);
  CHECK(m[0].elapsed_seconds == 3.0);
  CHECK(m[1].epoch == 2);
  CHECK(m[2].reached);
  CHECK(m[2].epoch == 4);
  CHECK(m[2].elapsed_seconds == 6.0);
  CHECK_FALSE(m[3].reached);
}

}  // namespace
}  // namespace mnist_ddp::report
