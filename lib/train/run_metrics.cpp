// lib/train/run_metrics.cpp — a sum's values travel as one float64 tensor per reduction.
#include "train/run_metrics.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace mnist_ddp::train {

RunMetrics::RunMetrics(c10::Device device, distributed::Communicator& comm)
    : comm_(comm), loss_sums_(at::zeros({2}, at::TensorOptions(at::kDouble).device(device))) {}

// Note [One add for both loss sums]
// The epoch's and the window's sums are one 2-element device tensor, so a loss costs one kernel
// launch, not two (launches, not arithmetic, bound a captured step).
void RunMetrics::add_loss(const at::Tensor& loss) { loss_sums_.add_(loss); }

void RunMetrics::add_step(std::int64_t images, int losses, const PhaseTimes& phases) {
  for (Sums* sums : {&epoch_, &window_}) {
    ++sums->steps;
    sums->losses += losses;
    sums->images += static_cast<double>(images);
    sums->phases += phases;
  }
}

RunMetrics::Sums RunMetrics::take(Sums& mine, int index) {
  std::vector<double> host = {mine.losses, mine.images};
  host.insert(host.end(), mine.phases.seconds.begin(), mine.phases.seconds.end());
  at::Tensor all = at::cat({loss_sums_.narrow(0, index, 1).cpu(), at::tensor(host, at::kDouble)});
  loss_sums_[index].zero_();
  Sums sums = std::exchange(mine, Sums{});  // its steps: this rank's, as every rank's
  comm_.all_reduce(all, distributed::ReduceOp::kSum);
  const double* sum = all.data_ptr<double>();
  for (double* value : {&sums.loss, &sums.losses, &sums.images}) *value = *sum++;
  for (double& phase : sums.phases.seconds) phase = *sum++;
  return sums;
}

void RunMetrics::gather_epoch(checkpoint::TrainProgress& progress) {
  const Sums sums = take(epoch_, 0);
  progress.loss_sum += sums.loss;
  progress.loss_count += static_cast<std::int64_t>(sums.losses);
  progress.images += static_cast<std::int64_t>(sums.images);
}

LogWindow RunMetrics::take_window() {
  // This rank's own time, read before the reduction sums it.
  const double seconds = window_.phases.total();
  const Sums sums = take(window_, 1);
  LogWindow window;
  window.steps = sums.steps;
  window.loss = sums.loss / std::max(1.0, sums.losses);
  window.images_per_sec = sums.images / std::max(seconds, 1e-12);
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    window.phases.seconds[i] = sums.phases.seconds[i] / comm_.size();
  return window;
}

}  // namespace mnist_ddp::train
