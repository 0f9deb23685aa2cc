// lib/report/progress.hpp — provides: Progress, a live line on terminals, else periodic lines.
#pragma once

#include <string>

#include "common/log.hpp"
#include "config/train_config.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

/// --progress with "auto" decided: live when the user watches a terminal, else lines.
config::Progress progress_style(config::Progress option);

class Progress {
 public:
  /// Writes through `log` (rank 0); kOff writes nothing.
  Progress(const Log& log, config::Progress style) : log_(log), style_(style) {}

  /// After every optimizer step; the next log line (the epoch's row) replaces the live line.
  void on_step(const train::StepReport& step);

 private:
  void draw_live(const train::StepReport& step);
  void print_line(const train::StepReport& step);
  /// Seconds left in the epoch at this epoch's pace so far.
  double eta_seconds(const train::StepReport& step) const;

  const Log& log_;
  config::Progress style_;
  double loss_ = -1;  // of the last log window; < 0 until the first one
  double images_per_sec_ = 0;
  // This epoch in this process: start, steps and images since.
  std::int64_t epoch_ = 0;
  train::TraceClock::time_point epoch_start_;
  std::int64_t epoch_steps_ = 0;
  std::int64_t epoch_images_ = 0;
  train::TraceClock::time_point last_draw_;
};

/// "1:02:03", "4:05": a duration for people.
std::string format_duration(double seconds);

}  // namespace mnist_ddp::report
