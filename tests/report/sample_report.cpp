// tests/report/sample_report.cpp — provides: main of sample_report, which writes a realistic run
// report (cnn, 4 ranks on 2 hosts, 3 epochs, 101 recorded steps, rank 3 computing 1.5x slower)
// to the given path, for the browser check and the screenshot in docs/report.png; with --empty,
// the report of a run that stopped before its first step.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>

#include "report/run_report.hpp"

namespace {

using mnist_ddp::report::ReportEpoch;
using mnist_ddp::report::ReportRank;
using mnist_ddp::report::ReportStep;
using mnist_ddp::report::RunReport;

// 60000 images / 4 ranks / 64 per step, rounded up: the steps of one epoch.
constexpr std::int64_t kStepsPerEpoch = 235;
constexpr std::int64_t kEpochs = 3;
constexpr int kRanks = 4;
constexpr double kImagesPerStep = 64.0 * kRanks;
constexpr double kEvalSeconds = 1.4;  // the test-set evaluation after each epoch

/// Noise in [-1, 1]. mt19937's output is fixed by the standard (its distributions are not), so
/// every build draws the same report.
class Noise {
 public:
  double next() { return static_cast<double>(engine_()) / 2147483647.5 - 1.0; }

 private:
  std::mt19937 engine_{20240601u};
};

/// Per-step phase means in ms (data, forward, backward, comm wait, optimizer) of a healthy rank;
/// the straggler computes 1.5x longer and the others wait for it.
ReportRank make_rank(int rank, std::int64_t steps, bool straggler, double other_compute_ms) {
  const double slow = straggler ? 1.5 : 1.0;
  const double data = 1.2 * slow, forward = 6.0 * slow, backward = 11.0 * slow, optimizer = 1.0;
  const double compute = data + forward + backward + optimizer;
  const double comm_wait = straggler ? 0.4 : 0.4 + other_compute_ms - compute;
  const double per_step_s = (compute + comm_wait + 0.6) / 1000.0;  // 0.6 ms outside the phases
  const auto total = [&](double ms) { return ms / 1000.0 * static_cast<double>(steps); };
  ReportRank result;
  result.rank = rank;
  result.host = rank < 2 ? "node01" : "node02";
  result.local_rank = rank % 2;
  result.device = "cpu";
  result.steps = steps;
  result.step_seconds_mean = per_step_s;
  result.phases[mnist_ddp::train::Phase::kData] = total(data);
  result.phases[mnist_ddp::train::Phase::kForward] = total(forward);
  result.phases[mnist_ddp::train::Phase::kBackward] = total(backward);
  result.phases[mnist_ddp::train::Phase::kCommWait] = total(comm_wait);
  result.phases[mnist_ddp::train::Phase::kOptimizer] = total(optimizer);
  return result;
}

RunReport sample_report() {
  RunReport report;
  report.title = "mnist_ddp cnn, 4 ranks on 2 hosts";
  report.config = {{"model", "cnn"},
                   {"epochs", "3"},
                   {"batch-size", "64"},
                   {"test-batch-size", "1000"},
                   {"optimizer", "sgd"},
                   {"lr", "0.01"},
                   {"momentum", "0.9"},
                   {"seed", "1"},
                   {"threads", "1"},
                   {"data-dir", "/usr/share/datasets/mnist"},
                   {"metrics-file", "runs/cnn-4/metrics.jsonl"},
                   {"checkpoint-dir", "runs/cnn-4/checkpoints"}};

  const std::int64_t steps = kStepsPerEpoch * kEpochs;
  for (int rank = 0; rank < kRanks; ++rank) {
    report.ranks.push_back(make_rank(rank, steps, /*straggler=*/rank == 3,
                                     /*other_compute_ms=*/(1.2 + 6.0 + 11.0) * 1.5 + 1.0));
  }
  const double step_s = report.ranks[0].step_seconds_mean;

  Noise noise;
  double elapsed = 0;
  double epoch_start = 0;  // elapsed time when the epoch's training began
  double loss_sum = 0;
  std::int64_t loss_count = 0;
  const double test_losses[] = {0.118, 0.071, 0.052};
  const double test_accuracies[] = {0.9641, 0.9782, 0.9838};
  for (std::int64_t step = 1; step <= steps; ++step) {
    const std::int64_t epoch = (step - 1) / kStepsPerEpoch + 1;
    // The first step pays for allocations and a cold cache.
    const double seconds = step == 1 ? 0.35 : step_s * (1.0 + 0.06 * noise.next());
    elapsed += seconds;
    const double loss =
        0.06 + 2.24 * std::exp(-static_cast<double>(step) / 45.0) + 0.05 * (1 + noise.next());
    loss_sum += loss;
    ++loss_count;
    if (step % 7 == 1) report.steps.push_back({step, elapsed, loss, kImagesPerStep / seconds});
    if (step % kStepsPerEpoch == 0) {
      const double train_seconds = elapsed - epoch_start;
      elapsed += kEvalSeconds;
      epoch_start = elapsed;
      const auto index = static_cast<size_t>(epoch - 1);
      report.epochs.push_back({step, loss_sum / static_cast<double>(loss_count), test_losses[index],
                               test_accuracies[index],
                               kImagesPerStep * kStepsPerEpoch / train_seconds, elapsed});
      loss_sum = 0;
      loss_count = 0;
    }
  }

  char wall[32], rate[32];
  std::snprintf(wall, sizeof wall, "%.1f s", elapsed + 2.3);
  std::snprintf(rate, sizeof rate, "%.0f", report.epochs.back().images_per_sec);
  report.summary = {{"result", "OK: 98.38% >= --min-accuracy 97%"},
                    {"final test accuracy", "98.38%"},
                    {"final test loss", "0.052"},
                    {"final train loss", "0.0947"},
                    {"steps", std::to_string(steps)},
                    {"train images/s", rate},
                    {"wall time", wall},
                    {"world size", "4 ranks on 2 hosts"}};
  return report;
}

}  // namespace

int main(int argc, char** argv) {
  const bool empty = argc == 3 && std::string(argv[1]) == "--empty";
  if (argc != 2 && !empty) {
    std::fprintf(stderr, "usage: %s [--empty] REPORT.html\n", argv[0]);
    return 2;
  }
  try {
    RunReport report = sample_report();
    if (empty) {
      // A run that stopped before its first step: configuration and layout, nothing measured.
      report.title += ", stopped before the first step";
      report.epochs.clear();
      report.steps.clear();
      report.ranks.clear();
      report.summary = {{"result", "no step was run"}};
    }
    mnist_ddp::report::write_run_report(argv[argc - 1], report);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sample_report: %s\n", e.what());
    return 1;
  }
  return 0;
}
