// lib/report/metrics_writer.hpp — provides: MetricsWriter, rank 0's JSON Lines metrics file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "train/train_reports.hpp"

namespace mnist_ddp::report {

constexpr int kMetricsSchema = 3;  // every record's "schema": raised when a field changes or goes

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
  /// Empties `path`, or with `append` closes a line a killed run left unfinished and adds to it;
  /// an empty path writes nothing. Throws UsageError when it cannot be opened or is a symlink.
  MetricsWriter(const std::string& path, RunFacts facts, bool append);

  /// A "step" record for a step with a log window; its phases are per rank, averaged over ranks.
  void write_step(const train::StepReport& step);
  /// An "epoch" record, with rank 0's phases.
  void write_epoch(const train::EpochReport& report);
  /// An "evaluation" record for every evaluation, epoch ends included; train_s excludes them.
  void write_evaluation(const train::EvalReport& report);
  /// The "summary" record; allreduce_bytes_per_step: each rank's, when ranks communicate.
  void write_summary(const train::TrainSummary& summary, double wall_seconds,
                     double startup_seconds);

 private:
  void write(nlohmann::json record);

  struct CloseFile {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, CloseFile> file_;
  std::string path_;  // for errors
  RunFacts facts_;
};

}  // namespace mnist_ddp::report
