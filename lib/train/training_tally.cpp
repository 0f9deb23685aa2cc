// lib/train/training_tally.cpp — running sums of a stretch of training.
#include "train/training_tally.hpp"

#include <utility>

#include <ATen/ATen.h>

namespace mnist_ddp::train {

TrainingTally::TrainingTally(at::Tensor loss_sum) : loss_sum_(std::move(loss_sum)) {}

void TrainingTally::add_step(std::int64_t images, const PhaseTimes& phases) {
  ++steps_;
  images_ += images;
  phases_ += phases;
}

at::Tensor TrainingTally::take() {
  const auto scalar = [](double value) { return at::scalar_tensor(value, at::kDouble); };
  const PhaseTimes& p = phases_;
  at::Tensor sums =
      at::stack({loss_sum_.cpu(), scalar(losses_), scalar(images_), scalar(p.data),
                 scalar(p.forward), scalar(p.backward), scalar(p.comm_wait), scalar(p.optimizer)});
  loss_sum_.zero_();
  losses_ = 0;
  steps_ = 0;
  images_ = 0;
  phases_ = PhaseTimes{};
  return sums;
}

}  // namespace mnist_ddp::train
