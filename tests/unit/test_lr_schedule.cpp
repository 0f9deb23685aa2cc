// tests/unit/test_lr_schedule.cpp — LrSchedule against PyTorch's formulas at known steps:
// OneCycleLR with its defaults, CosineAnnealingLR after a linear warm-up, and constant with a
// warm-up.
#include <cmath>

#include <doctest/doctest.h>

#include "train/lr_schedule.hpp"

namespace mnist_ddp::train {
namespace {

TEST_CASE("onecycle: lr/25 at the first step, lr at 30%, lr/25/1e4 at the last") {
  const LrSchedule s(config::Schedule::kOneCycle, 0.01, 0, 100);
  CHECK(s.lr_at(0) == doctest::Approx(0.01 / 25));
  // PyTorch: the rise ends at step float(0.3 * 100) - 1 = 29.
  CHECK(s.lr_at(29) == doctest::Approx(0.01));
  CHECK(s.lr_at(28) < 0.01);
  CHECK(s.lr_at(99) == doctest::Approx(0.01 / 25 / 1e4));
  // Half-way through the fall (steps 29..99): the mean of the two ends.
  CHECK(s.lr_at(64) == doctest::Approx((0.01 + 0.01 / 25 / 1e4) / 2));
  // Half-way through the rise (step 14.5 lies between 14 and 15): below and above the mean.
  CHECK(s.lr_at(14) < (0.01 + 0.01 / 25) / 2);
  CHECK(s.lr_at(15) > (0.01 + 0.01 / 25) / 2);
  CHECK(s.lr_at(1000) == s.lr_at(99));  // past the end the last rate holds
}

TEST_CASE("cosine: a linear warm-up, then half a cosine down towards 0") {
  const LrSchedule s(config::Schedule::kCosine, 0.1, 10, 110);
  CHECK(s.lr_at(0) == doctest::Approx(0.01));
  CHECK(s.lr_at(4) == doctest::Approx(0.05));
  CHECK(s.lr_at(9) == doctest::Approx(0.1));
  CHECK(s.lr_at(10) == doctest::Approx(0.1));
  CHECK(s.lr_at(60) == doctest::Approx(0.05));  // T_cur 50 of T_max 100
  CHECK(s.lr_at(85) == doctest::Approx(0.1 * (1 + std::cos(3.14159265358979 * 0.75)) / 2));
  CHECK(s.lr_at(109) > 0);
  CHECK(s.lr_at(109) < 1e-4);
}

TEST_CASE("constant: the warm-up, then --lr") {
  const LrSchedule warm(config::Schedule::kConstant, 0.2, 4, 50);
  CHECK(warm.lr_at(0) == doctest::Approx(0.05));
  CHECK(warm.lr_at(3) == doctest::Approx(0.2));
  CHECK(warm.lr_at(40) == 0.2);
  const LrSchedule plain(config::Schedule::kConstant, 0.2, 0, 50);
  CHECK(plain.lr_at(0) == 0.2);
  CHECK(plain.lr_at(49) == 0.2);
}

}  // namespace
}  // namespace mnist_ddp::train
