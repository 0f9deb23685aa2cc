// lib/train/lr_schedule.cpp — the schedules' formulas, PyTorch's where PyTorch has one.
#include "train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace mnist_ddp::train {
namespace {

// Note [Learning-rate schedules]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A rate depends on the global step alone: ranks agree without communicating, and a resume at
// step k continues with step k's rate.
// - onecycle is OneCycleLR with its defaults, but does not cycle momentum (Adam's beta1).
// - cosine is CosineAnnealingLR (eta_min 0) after the warm-up.
// - Warm-up step k < W gets lr * (k + 1) / W, so the first step already moves.
constexpr double kPi = 3.14159265358979323846;
constexpr double kOneCycleRise = 0.3;  // pct_start
constexpr double kOneCycleStart = 25;  // div_factor
constexpr double kOneCycleEnd = 1e4;   // final_div_factor

/// PyTorch's _annealing_cos: from `start` (pct 0) to `end` (pct 1) along half a cosine.
double cosine_between(double start, double end, double pct) {
  return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
}

}  // namespace

LrSchedule::LrSchedule(config::Schedule kind, double lr, std::int64_t warmup_steps,
                       std::int64_t total_steps)
    : kind_(kind),
      lr_(lr),
      warmup_steps_(warmup_steps),
      total_steps_(std::max<std::int64_t>(total_steps, 1)) {}

double LrSchedule::lr_at(std::int64_t steps_done) const {
  const double step = static_cast<double>(std::min(steps_done, total_steps_ - 1));
  if (kind_ == config::Schedule::kOneCycle) {
    const double initial = lr_ / kOneCycleStart;
    const double peak_step = kOneCycleRise * static_cast<double>(total_steps_) - 1;
    const double last_step = static_cast<double>(total_steps_ - 1);
    if (step <= peak_step) return cosine_between(initial, lr_, step / std::max(peak_step, 1e-12));
    return cosine_between(lr_, initial / kOneCycleEnd,
                          (step - peak_step) / std::max(last_step - peak_step, 1e-12));
  }
  if (steps_done < warmup_steps_) {
    return lr_ * static_cast<double>(steps_done + 1) / static_cast<double>(warmup_steps_);
  }
  if (kind_ == config::Schedule::kCosine) {
    const double span = static_cast<double>(total_steps_ - warmup_steps_);
    if (span <= 0) return lr_;
    return cosine_between(lr_, 0, (step - static_cast<double>(warmup_steps_)) / span);
  }
  return lr_;
}

}  // namespace mnist_ddp::train
