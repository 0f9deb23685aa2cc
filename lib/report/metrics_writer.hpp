// lib/report/metrics_writer.hpp — provides: MetricsWriter, the JSON Lines metrics file (a record
// every --log-every steps, one per evaluation, one per epoch, then a summary), written by rank 0.
// Every record carries "schema": kMetricsSchema, raised whenever a field changes meaning or goes
// away.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "train/train_reports.hpp"

namespace mnist_ddp::report {

constexpr int kMetricsSchema = 2;

/// Run-wide facts that every record of the file carries or the summary needs.
struct RunFacts {
  int world_size = 1;
  std::string backend;         // "mpi" or "nccl"
  std::string device;          // "cpu" or "cuda"
  std::string mode;            // "ddp" or "dp"
  std::string precision;       // "fp32" or "bf16"
  std::string model;           // "linear"
  double target_accuracy = 0;  // --target-accuracy; 0: none
};

class MetricsWriter {
 public:
  /// A new run empties `path`; a resumed run (`append`) adds to its end, first closing a line a
  /// killed run left unfinished. Created with mode 0666 less the umask. An empty path makes a
  /// writer that writes nothing. Throws UsageError when the file cannot be opened or `path` is a
  /// symbolic link.
  MetricsWriter(const std::string& path, RunFacts facts, bool append);

  /// {"event":"step", step, epoch, loss, lr, images_per_sec, steps (in the window),
  ///  phases: {data_s, forward_s, ...} per rank over the window, averaged over ranks}.
  /// Only for steps that carry a log window.
  void write_step(const train::StepReport& step);
  /// {"event":"epoch", epoch, step, train_loss, test_loss, test_accuracy, images_per_sec,
  ///  elapsed_s, world_size, phases_rank0: {data_s, forward_s, ...}, ...}
  void write_epoch(const train::EpochReport& report);
  /// {"event":"evaluation", epoch, step, test_loss, test_accuracy, test_correct, test_count,
  ///  train_s (training time so far, evaluations excluded), elapsed_s, launch_s}: every
  ///  evaluation, epoch ends included.
  void write_evaluation(const train::EvalReport& report);
  /// {"event":"summary", test_loss, test_accuracy, train_loss, steps, train_images_per_sec,
  ///  wall_s, startup_s, phases_rank0, allreduce_bytes_per_step (what each rank allreduces per
  ///  optimizer step whenever ranks communicate), world_size, backend, model}
  void write_summary(const train::TrainSummary& summary, double wall_seconds,
                     double startup_seconds);

 private:
  void write(nlohmann::json record);

  struct CloseFile {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, CloseFile> file_;
  RunFacts facts_;
};

}  // namespace mnist_ddp::report
