// lib/train/lr_schedule.hpp — provides: LrSchedule, the learning rate of every optimizer step:
// constant, one-cycle or cosine, with a linear warm-up (Note [Learning-rate schedules]).
#pragma once

#include <cstdint>

#include "config/train_config.hpp"

namespace mnist_ddp::train {

class LrSchedule {
 public:
  /// `kind`: constant | onecycle | cosine; `lr`: the base (constant, cosine) or peak (onecycle)
  /// rate; `warmup_steps`: linear warm-up (constant, cosine); `total_steps`: the run's optimizer
  /// steps, over which onecycle and cosine anneal.
  LrSchedule(config::Schedule kind, double lr, std::int64_t warmup_steps, std::int64_t total_steps);

  /// The rate of the optimizer step taken after `steps_done` steps, as PyTorch's schedulers
  /// count (the first step is 0). Past `total_steps` the last rate holds.
  double lr_at(std::int64_t steps_done) const;

  std::int64_t total_steps() const { return total_steps_; }

 private:
  config::Schedule kind_;
  double lr_;
  std::int64_t warmup_steps_;
  std::int64_t total_steps_;
};

}  // namespace mnist_ddp::train
