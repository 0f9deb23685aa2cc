// lib/report/metrics_writer.cpp — JSON Lines via nlohmann::json (doubles round-trip), flushed.
#include "report/metrics_writer.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace mnist_ddp::report {
namespace {

nlohmann::json phase_record(const train::PhaseTimes& phases) {
  nlohmann::json record = nlohmann::json::object();
  for (const train::Phase phase : train::kPhases) {
    if (phases.shown(phase)) record[std::string(train::phase_name(phase)) + "_s"] = phases[phase];
  }
  return record;
}

/// Opens `path`, emptied unless `append` (then readable); a symlink (/dev/stdout?) is refused.
int open_metrics_file(const std::string& path, bool append) {
  const int open_flags = append ? O_RDWR | O_APPEND : O_WRONLY | O_TRUNC;
  const int fd = open(path.c_str(), open_flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd >= 0) return fd;
  if (errno == ELOOP) {
    throw UsageError("--metrics-file '" + path + "' is a symbolic link; name the file itself");
  }
  throw UsageError("cannot open --metrics-file '" + path + "': " + std::strerror(errno));
}

/// Whether the file's last byte is not a newline: a record cut short by a killed run.
bool ends_mid_line(int fd) {
  struct stat info {};
  char last = '\n';
  return fstat(fd, &info) == 0 && info.st_size > 0 && pread(fd, &last, 1, info.st_size - 1) == 1 &&
         last != '\n';
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& path, RunFacts facts, bool append)
    : path_(path), facts_(std::move(facts)) {
  if (path.empty()) return;
  const int fd = open_metrics_file(path, append);
  const bool close_line = append && ends_mid_line(fd);
  file_.reset(fdopen(fd, "a"));
  if (!file_) {
    close(fd);
    throw UsageError("cannot open --metrics-file '" + path + "': " + std::strerror(errno));
  }
  if (close_line)
    std::fputc('\n', file_.get());  // reaches the file, or fails, with the next record
}

void MetricsWriter::write_step(const train::StepReport& step) {
  if (!step.window) return;
  write({{"event", "step"},
         {"step", step.step},
         {"epoch", step.epoch},
         {"loss", step.window->loss},
         {"lr", step.lr},
         {"images_per_sec", step.window->images_per_sec},
         {"steps", step.window->steps},
         {"phases", phase_record(step.window->phases)}});
}

void MetricsWriter::write_epoch(const train::EpochReport& report) {
  write({{"event", "epoch"},
         {"epoch", report.epoch},
         {"step", report.step},
         {"complete", report.complete},
         {"train_loss", report.train_loss},
         {"test_loss", report.test.loss},
         {"test_accuracy", report.test.accuracy},
         {"test_correct", report.test.correct},
         {"test_count", report.test.count},
         {"images", report.images},
         {"images_per_sec", report.images_per_sec},
         {"train_s", report.train_seconds},
         {"elapsed_s", report.elapsed_seconds},
         {"world_size", facts_.world_size},
         {"phases_rank0", phase_record(report.phases)}});
}

void MetricsWriter::write_evaluation(const train::EvalReport& report) {
  write({{"event", "evaluation"},
         {"epoch", report.epoch},
         {"step", report.step},
         {"test_loss", report.test.loss},
         {"test_accuracy", report.test.accuracy},
         {"test_correct", report.test.correct},
         {"test_count", report.test.count},
         {"train_s", report.train_seconds},
         {"elapsed_s", report.elapsed_seconds},
         {"launch_s", report.launch_seconds}});
}

void MetricsWriter::write_summary(const train::TrainSummary& summary, double wall_seconds,
                                  double startup_seconds) {
  nlohmann::json record = {{"event", "summary"},
                           {"test_loss", summary.test.loss},
                           {"test_accuracy", summary.test.accuracy},
                           {"train_loss", summary.train_loss},
                           {"steps", summary.steps},
                           {"train_images_per_sec", summary.images_per_sec},
                           {"wall_s", wall_seconds},
                           {"startup_s", startup_seconds},
                           {"one_time_costs_s", summary.one_time_seconds},
                           {"phases_rank0", phase_record(summary.phases)},
                           {"allreduce_bytes_per_step", summary.allreduce_bytes},
                           {"world_size", facts_.world_size},
                           {"backend", facts_.backend},
                           {"device", facts_.device},
                           {"mode", facts_.mode},
                           {"precision", facts_.precision},
                           {"model", facts_.model}};
  if (summary.graph_nodes > 0) record["cuda_graph_nodes"] = summary.graph_nodes;
  if (!summary.graph_fallback.empty()) record["cuda_graph_fallback"] = summary.graph_fallback;
  if (facts_.target_accuracy > 0) {
    record["target_accuracy"] = facts_.target_accuracy;
    record["target_reached"] = summary.target.has_value();
    if (summary.target) {
      record["target_step"] = summary.target->step;
      record["target_train_s"] = summary.target->train_seconds;
      record["target_launch_s"] = summary.target->launch_seconds;
    }
  }
  write(std::move(record));
}

void MetricsWriter::write(nlohmann::json record) {
  if (!file_) return;
  record["schema"] = kMetricsSchema;
  const std::string line = record.dump() + '\n';
  if (std::fwrite(line.data(), 1, line.size(), file_.get()) != line.size() ||
      std::fflush(file_.get()) != 0) {
    throw Error(ExitCode::kFailure,
                "writing --metrics-file '" + path_ + "' failed: " + std::strerror(errno));
  }
}

}  // namespace mnist_ddp::report
