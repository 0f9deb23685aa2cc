// lib/train/training_tally.hpp — provides: TrainingTally, this rank's training loss, images, steps
// and phase times since they were last taken: one for the epoch, one for each log window.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "train/train_reports.hpp"

namespace mnist_ddp::train {

/// The loss sum is a tensor on the training device, so adding a loss never makes the host wait
/// for the step's kernels; it is read only when the tally is taken.
class TrainingTally {
 public:
  /// The layout of take()'s tensor.
  enum Sum { kLoss, kLosses, kImages, kData, kForward, kBackward, kCommWait, kOptimizer, kCount };

  /// `loss_sum`: a 0-dim double tensor on the training device, zero, into which the owner adds
  /// each micro-batch's loss (detached), counting it with count_loss().
  explicit TrainingTally(at::Tensor loss_sum);

  /// Counts one loss added to the sum: the host's half of a loss, once per replay too.
  void count_loss() { ++losses_; }
  /// One optimizer step that trained `images` of this rank's images in `phases`.
  void add_step(std::int64_t images, const PhaseTimes& phases);

  /// Optimizer steps since the last take().
  std::int64_t steps() const { return steps_; }

  /// The sums since the last take(), as kCount doubles on the CPU indexed by Sum (ready to be
  /// summed over ranks), and starts again from zero.
  at::Tensor take();

 private:
  at::Tensor loss_sum_;
  std::int64_t losses_ = 0;  // micro-batch losses in loss_sum_
  std::int64_t steps_ = 0;
  std::int64_t images_ = 0;
  PhaseTimes phases_;
};

}  // namespace mnist_ddp::train
