// lib/report/run_report.hpp — provides: RunReport, write_run_report: one self-contained HTML page.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "train/train_reports.hpp"

namespace mnist_ddp::report {

/// One finished epoch, with the evaluation after it.
struct ReportEpoch {
  std::int64_t step = 0;      // optimizer steps since the start of training, at the epoch's end
  double train_loss = 0;      // mean over the epoch's steps and ranks
  double test_loss = 0;       // on the test set after the epoch
  double test_accuracy = 0;   // 0..1
  double images_per_sec = 0;  // all ranks together
  double elapsed_s = 0;       // since the start of training
};

/// One evaluation between steps (--eval-every).
struct ReportEvaluation {
  std::int64_t step = 0;     // optimizer steps since the start of training
  double test_loss = 0;      // on the test set
  double test_accuracy = 0;  // 0..1
};

/// One recorded training step (every step, or every n-th: the charts draw what they get).
struct ReportStep {
  std::int64_t step = 0;
  double elapsed_s = 0;       // since the start of training
  double loss = 0;            // of this step, averaged over ranks
  double images_per_sec = 0;  // all ranks together, since the previous recorded step
};

/// Where one rank ran and where its training time went.
struct ReportRank {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;            // "cpu", "cuda:0 (NVIDIA H100, 0000:18:00.0)"
  std::int64_t steps = 0;        // training steps the totals below cover
  double step_seconds_mean = 0;  // mean wall time of one training step
  train::PhaseTimes phases;      // totals over `steps`
};

struct RunReport {
  std::string title;                                        // "mnist_ddp cnn, 4 ranks"
  std::vector<std::pair<std::string, std::string>> config;  // option name -> value, in order
  std::vector<ReportEpoch> epochs;
  std::vector<ReportEvaluation> evaluations;  // --eval-every; empty without it
  std::vector<ReportStep> steps;
  std::vector<ReportRank> ranks;                             // in rank order
  std::vector<std::pair<std::string, std::string>> summary;  // label -> value, in order
};

/// Writes `report` atomically as one self-contained HTML page (inline CSS and SVG, no script, run
/// strings escaped); throws UsageError naming `path` when the file cannot be written.
void write_run_report(const std::string& path, const RunReport& report);

}  // namespace mnist_ddp::report
