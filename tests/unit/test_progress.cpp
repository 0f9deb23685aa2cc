// tests/unit/test_progress.cpp — Progress: plain lines every --log-every steps with no control
// characters, a live line that log lines erase first, and durations for people.
#include <algorithm>
#include <cstdio>
#include <string>

#include <doctest/doctest.h>

#include "common/log.hpp"
#include "report/progress.hpp"

namespace mnist_ddp::report {
namespace {

/// What a Log writes, read back from a temporary file.
class CapturedLog {
 public:
  CapturedLog() : file_(std::tmpfile()), log_(/*rank=*/0, /*all_ranks=*/false, file_) {}
  ~CapturedLog() { std::fclose(file_); }
  const Log& log() const { return log_; }
  std::string text() const {
    std::string text;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) text += static_cast<char>(c);
    return text;
  }

 private:
  std::FILE* file_;
  Log log_;
};

/// Step `step` of a 20-step epoch; every 10th carries a log window with loss `step / 100`.
train::StepReport step_report(std::int64_t step) {
  train::StepReport report;
  report.step = step;
  report.epoch = 1;
  report.epoch_steps = 20;
  report.epoch_steps_done = step;
  report.images = 128;
  report.seconds = 0.001;
  if (step % 10 == 0) report.window = train::LogWindow{10, step / 100.0, 1000, {}};
  return report;
}

TEST_CASE("lines: one plain line per log window, without control characters") {
  CapturedLog captured;
  Progress progress(captured.log(), config::Progress::kLines);
  for (int step = 1; step <= 20; ++step) progress.on_step(step_report(step));
  const std::string text = captured.text();
  CHECK(text.find("# progress: epoch 1 step 10/20 (50%) loss 0.100000 ") == 0);
  CHECK(text.find("\n# progress: epoch 1 step 20/20 (100%) loss 0.200000 ") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  for (char c : text) CHECK((c == '\n' || (c >= ' ' && c < 127)));
}

TEST_CASE("live: the line is redrawn in place and erased before the next log line") {
  CapturedLog captured;
  Progress progress(captured.log(), config::Progress::kLive);
  for (int step = 1; step <= 10; ++step) progress.on_step(step_report(step));
  captured.log().line("  1  20  0.1");
  const std::string text = captured.text();
  CHECK(text.find("\r  epoch 1 [1/20]  loss -  ") == 0);  // the first step draws at once
  CHECK(text.find("\r  epoch 1 [10/20]  loss 0.1000  ") != std::string::npos);  // a window
  CHECK(text.find("\033[K") != std::string::npos);
  const std::string erased_then_line = "\r\033[K  1  20  0.1\n";
  REQUIRE(text.size() > erased_then_line.size());
  CHECK(text.substr(text.size() - erased_then_line.size()) == erased_then_line);
}

TEST_CASE("off writes nothing") {
  CapturedLog captured;
  Progress progress(captured.log(), config::Progress::kOff);
  for (int step = 1; step <= 20; ++step) progress.on_step(step_report(step));
  CHECK(captured.text().empty());
}

TEST_CASE("--progress values map to styles") {
  CHECK(progress_style(config::Progress::kLive) == config::Progress::kLive);
  CHECK(progress_style(config::Progress::kLines) == config::Progress::kLines);
  CHECK(progress_style(config::Progress::kOff) == config::Progress::kOff);
}

TEST_CASE("durations read as m:ss or h:mm:ss") {
  CHECK(format_duration(0) == "0:00");
  CHECK(format_duration(65.4) == "1:05");
  CHECK(format_duration(3725) == "1:02:05");
  CHECK(format_duration(-3) == "0:00");
}

}  // namespace
}  // namespace mnist_ddp::report
