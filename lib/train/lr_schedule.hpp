// lib/train/lr_schedule.hpp — provides: LrSchedule (Note [Learning-rate schedules]).
#pragma once

#include <cstdint>

#include "config/train_config.hpp"

namespace mnist_ddp::train {

class LrSchedule {
 public:
  /// `lr`: base rate, onecycle's peak; `warmup_steps` (not onecycle); `total_steps`: the run's
  /// optimizer steps, over which onecycle and cosine anneal.
  LrSchedule(config::Schedule kind, double lr, std::int64_t warmup_steps, std::int64_t total_steps);

  /// The rate of step `steps_done` (from 0, as PyTorch counts); past `total_steps` the last one.
  double lr_at(std::int64_t steps_done) const;

 private:
  config::Schedule kind_;
  double lr_;
  std::int64_t warmup_steps_;
  std::int64_t total_steps_;
};

}  // namespace mnist_ddp::train
