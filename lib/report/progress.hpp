// lib/report/progress.hpp — provides: Progress, rank 0's view of the running epoch: one live line
// on a terminal (step/total, loss, global images/s, ETA) that gives way to the epoch's table row,
// or plain periodic lines (every --log-every steps) in files, pipes and Slurm logs.
#pragma once

#include <string>

#include "common/log.hpp"
#include "config/train_config.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::report {

enum class ProgressStyle { kLive, kLines, kOff };

/// --progress: "auto" is live when the user watches a terminal, else lines.
ProgressStyle progress_style(config::Progress option);

/// Whether stdout reaches a terminal. Open MPI gives every rank a pseudo-terminal even when
/// mpirun's own output goes to a file, so under mpirun this asks about mpirun's stdout.
bool stdout_reaches_terminal();

class Progress {
 public:
  /// Writes through `log` (rank 0); kOff writes nothing.
  Progress(const Log& log, ProgressStyle style);

  /// After every optimizer step (windows carry the loss that is shown). The next log line,
  /// the epoch's table row, takes the live line's place.
  void on_step(const train::StepReport& step);

 private:
  void draw_live(const train::StepReport& step);
  void print_line(const train::StepReport& step);
  /// Seconds left in the epoch at this epoch's pace so far.
  double eta_seconds(const train::StepReport& step) const;

  const Log& log_;
  ProgressStyle style_;
  double loss_ = -1;  // of the last log window; < 0 until the first one
  double images_per_sec_ = 0;
  // This epoch in this process: when its first step ended, and steps and images since.
  std::int64_t epoch_ = 0;
  train::TraceClock::time_point epoch_start_;
  std::int64_t epoch_steps_ = 0;
  std::int64_t epoch_images_ = 0;
  train::TraceClock::time_point last_draw_;
};

/// "1:02:03", "4:05": a duration for people.
std::string format_duration(double seconds);

}  // namespace mnist_ddp::report
