// tests/unit/test_run_metrics.cpp — RunMetrics: every loss in both sums, a log window's loss, rate
// and phases reduced over the ranks, the epoch's sums into the progress; and PhaseTimes, whose
// comm wait share is unknown where graphed steps are among the phases.
#include <doctest/doctest.h>

#include <ATen/ATen.h>

#include "support/mirror_communicator.hpp"
#include "train/run_metrics.hpp"

namespace mnist_ddp::train {
namespace {

at::Tensor loss(double value) { return at::scalar_tensor(value, at::kDouble); }

TEST_CASE("run metrics: a log window is every rank's losses and images over this rank's time") {
  testing::MirrorCommunicator two_ranks(2);
  RunMetrics metrics(c10::Device(c10::kCPU), two_ranks);
  for (const double value : {2.0, 4.0}) metrics.add_loss(loss(value));
  PhaseTimes phases;
  phases[train::Phase::kData] = 0.5;
  phases[train::Phase::kForward] = 1.5;
  metrics.add_step(/*images=*/32, /*losses=*/2, phases);
  const LogWindow window = metrics.take_window();
  CHECK(window.steps == 1);
  CHECK(window.loss == 3.0);                         // (2 + 4) * 2 ranks / (2 * 2 ranks)
  CHECK(window.images_per_sec == 64.0 / 2.0);        // both ranks' images over this rank's 2 s
  CHECK(window.phases[train::Phase::kData] == 0.5);  // per rank, averaged over the ranks
  CHECK(window.phases[train::Phase::kForward] == 1.5);
  CHECK(window.phases.total() == 2.0);

  const LogWindow empty = metrics.take_window();  // a window starts again from zero
  CHECK(empty.steps == 0);
  CHECK(empty.loss == 0);
  CHECK(empty.phases.total() == 0);
}

TEST_CASE("run metrics: the epoch's sums go into the progress, apart from the window's") {
  testing::MirrorCommunicator two_ranks(2);
  RunMetrics metrics(c10::Device(c10::kCPU), two_ranks);
  metrics.add_loss(loss(1.25));
  metrics.add_step(/*images=*/16, /*losses=*/1, PhaseTimes{});
  metrics.take_window();  // leaves the epoch's sums alone
  metrics.add_loss(loss(0.75));
  metrics.add_step(/*images=*/8, /*losses=*/1, PhaseTimes{});
  checkpoint::TrainProgress progress;
  progress.loss_sum = 10;
  progress.loss_count = 4;
  progress.images = 100;
  metrics.gather_epoch(progress);
  CHECK(progress.loss_sum == 10 + 2 * (1.25 + 0.75));
  CHECK(progress.loss_count == 4 + 2 * 2);
  CHECK(progress.images == 100 + 2 * 24);
  metrics.gather_epoch(progress);  // nothing new since
  CHECK(progress.images == 148);
  CHECK(metrics.take_window().loss == 0.75);  // the window holds the losses since its last take
}

TEST_CASE("phase times: a total of every phase; comm wait's share unknown with graphed steps") {
  PhaseTimes eager;
  eager[train::Phase::kData] = 1;
  eager[train::Phase::kCommWait] = 3;
  CHECK(eager.total() == 4);
  CHECK_FALSE(eager.graphed());
  CHECK(eager.comm_share() == 0.75);

  PhaseTimes graphed;
  graphed[train::Phase::kLaunch] = 1;
  graphed[train::Phase::kDevice] = 2;
  CHECK(graphed.total() == 3);
  CHECK(graphed.graphed());
  CHECK_FALSE(graphed.comm_share().has_value());

  eager += graphed;
  CHECK(eager.total() == 7);
  CHECK(eager[train::Phase::kDevice] == 2);
  CHECK_FALSE(eager.comm_share().has_value());
}

}  // namespace
}  // namespace mnist_ddp::train
