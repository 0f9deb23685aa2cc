// lib/report/progress.cpp — at most 10 redraws a second: one per step costs more than the step.
#include "report/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace mnist_ddp::report {
namespace {

constexpr double kRedrawSeconds = 0.1;

double seconds_between(train::TraceClock::time_point from, train::TraceClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool is_terminal_device(const std::string& path) {
  return path.rfind("/dev/pts/", 0) == 0 || path.rfind("/dev/tty", 0) == 0;
}

/// Whether stdout reaches a terminal; under mpirun, mpirun's stdout (Open MPI gives every rank a
/// pseudo-terminal even when mpirun writes to a file).
bool stdout_reaches_terminal() {
  if (!isatty(STDOUT_FILENO)) return false;
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return true;
  // The pseudo-terminal is Open MPI's: ask where the parent writes (a remote daemon: nowhere).
  std::error_code error;
  const auto launcher_stdout = std::filesystem::read_symlink(
      "/proc/" + std::to_string(getppid()) + "/fd/" + std::to_string(STDOUT_FILENO), error);
  return !error && is_terminal_device(launcher_stdout.string());
}

}  // namespace

config::Progress progress_style(config::Progress option) {
  if (option != config::Progress::kAuto) return option;
  return stdout_reaches_terminal() ? config::Progress::kLive : config::Progress::kLines;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (total >= 3600) {
    return string_printf("%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  }
  return string_printf("%lld:%02lld", total / 60, total % 60);
}

void Progress::on_step(const train::StepReport& step) {
  if (style_ == config::Progress::kOff) return;
  const train::TraceClock::time_point now = train::TraceClock::now();
  if (step.epoch != epoch_) {
    epoch_ = step.epoch;
    epoch_start_ = now - std::chrono::duration_cast<train::TraceClock::duration>(
                             std::chrono::duration<double>(step.seconds));
    epoch_steps_ = 0;
    epoch_images_ = 0;
  }
  ++epoch_steps_;
  epoch_images_ += step.images;
  images_per_sec_ = epoch_images_ / std::max(seconds_between(epoch_start_, now), 1e-9);
  if (step.window) loss_ = step.window->loss;

  if (style_ == config::Progress::kLines) {
    if (step.window) print_line(step);
  } else if (step.window || epoch_steps_ == 1 ||
             seconds_between(last_draw_, now) >= kRedrawSeconds) {
    last_draw_ = now;
    draw_live(step);
  }
}

double Progress::eta_seconds(const train::StepReport& step) const {
  const double per_step = seconds_between(epoch_start_, train::TraceClock::now()) /
                          std::max<std::int64_t>(1, epoch_steps_);
  return per_step * static_cast<double>(step.epoch_steps - step.epoch_steps_done);
}

void Progress::draw_live(const train::StepReport& step) {
  char loss[32] = "-";
  if (loss_ >= 0) std::snprintf(loss, sizeof loss, "%.4f", loss_);
  log_.live("  epoch %lld [%lld/%lld]  loss %s  %.0f img/s  ETA %s",
            static_cast<long long>(step.epoch), static_cast<long long>(step.epoch_steps_done),
            static_cast<long long>(step.epoch_steps), loss, images_per_sec_,
            format_duration(eta_seconds(step)).c_str());
}

void Progress::print_line(const train::StepReport& step) {
  log_.line("# progress: epoch %lld step %lld/%lld (%.0f%%) loss %.6f %.0f img/s ETA %s",
            static_cast<long long>(step.epoch), static_cast<long long>(step.epoch_steps_done),
            static_cast<long long>(step.epoch_steps),
            100.0 * step.epoch_steps_done / std::max<std::int64_t>(1, step.epoch_steps), loss_,
            images_per_sec_, format_duration(eta_seconds(step)).c_str());
}

}  // namespace mnist_ddp::report
