// lib/train/run_metrics.hpp — provides: RunMetrics, epoch and log-window sums reduced over ranks.
#pragma once

#include <cstdint>

#include "checkpoint/checkpoint_meta.hpp"
#include "distributed/communicator.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::train {

/// The loss sums stay on the training device until taken: adding a loss never waits for it.
class RunMetrics {
 public:
  RunMetrics(c10::Device device, distributed::Communicator& comm);

  /// Adds a detached 0-dim micro-batch loss: device work alone, so a captured step holds it.
  void add_loss(const at::Tensor& loss);
  /// One optimizer step: this rank's `images`, `losses` added, its `phases`.
  void add_step(std::int64_t images, int losses, const PhaseTimes& phases);

  /// Collective: adds every rank's losses and images since the last call into `progress`.
  void gather_epoch(checkpoint::TrainProgress& progress);
  /// Collective: the log window since the last call, reduced over all ranks.
  LogWindow take_window();

 private:
  /// Sums since last taken; `loss` is filled only when taken (on the device till then).
  struct Sums {
    double loss = 0;
    double losses = 0;  // micro-batch losses
    double images = 0;
    std::int64_t steps = 0;
    PhaseTimes phases;
  };
  /// Collective: `mine` and loss_sums_[`index`] summed over all ranks; both start again at 0.
  Sums take(Sums& mine, int index);

  distributed::Communicator& comm_;
  at::Tensor loss_sums_;  // the epoch's and the window's (Note [One add for both loss sums])
  Sums epoch_;
  Sums window_;
};

}  // namespace mnist_ddp::train
