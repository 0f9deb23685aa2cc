// lib/train/lr_schedule.cpp — the schedules' formulas, PyTorch's where PyTorch has one.
#include "train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace mnist_ddp::train {
namespace {

// Note [Learning-rate schedules]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A schedule is a function of the global optimizer step alone, so every rank computes the same
// rate without communicating, and a run resumed at step k continues with the rate of step k.
// - onecycle is torch.optim.lr_scheduler.OneCycleLR with its defaults (pct_start 0.3,
//   div_factor 25, final_div_factor 1e4, cosine annealing, two phases): from lr / 25 up to lr
//   over the first 30% of the steps, then down to lr / 25 / 1e4 at the last step. Unlike
//   PyTorch's default it does not also cycle the momentum (Adam's beta1).
// - cosine is CosineAnnealingLR (eta_min 0) over the steps after the warm-up.
// - The warm-up is linear: step k < W gets lr * (k + 1) / W, so the first step already moves.
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
