// lib/config/describe_config.cpp — one list, so the banner and the report cannot disagree.
#include "config/describe_config.hpp"

#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace mnist_ddp::config {
namespace {

template <typename T>
std::string text(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string text(bool value) { return value ? "true" : "false"; }

/// `value` with the fewest significant digits (6 or more) that read back as exactly it: ranks
/// compare options by this text.
std::string text(double value) {
  constexpr int kExactDigits = 17;  // enough for any double
  for (int digits = 6;; ++digits) {
    std::ostringstream out;
    out << std::setprecision(digits) << value;
    if (digits == kExactDigits || std::strtod(out.str().c_str(), nullptr) == value) {
      return out.str();
    }
  }
}

std::string path(const std::string& value) { return value.empty() ? "-" : value; }

}  // namespace

std::vector<std::pair<std::string, std::string>> describe_config(const TrainConfig& c) {
  return {
      {"data-dir", path(c.data_dir)},
      {"normalize-mean", text(c.normalize_mean)},
      {"normalize-std", text(c.normalize_std)},
      {"drop-last", text(c.drop_last)},
      {"model", c.model},
      {"epochs", text(c.epochs)},
      {"batch-size", text(c.batch_size) + " per rank"},
      {"global-batch-size", text(c.global_batch_size)},
      {"test-batch-size", text(c.test_batch_size) + " per rank"},
      {"optimizer", c.optimizer},
      {"lr", text(c.lr)},
      {"momentum", text(c.momentum)},
      {"weight-decay", text(c.weight_decay)},
      {"adam-beta1", text(c.adam_beta1)},
      {"adam-beta2", text(c.adam_beta2)},
      {"lr-schedule", c.lr_schedule},
      {"warmup-steps", text(c.warmup_steps)},
      {"seed", text(c.seed)},
      {"max-steps", text(c.max_steps)},
      {"target-accuracy", text(c.target_accuracy)},
      {"eval-every", text(c.eval_every)},
      {"bucket-mb", text(c.bucket_mb)},
      {"grad-accum", text(c.grad_accum)},
      {"grad-dtype", c.grad_dtype},
      {"comm-timeout", text(c.comm_timeout) + " s"},
      {"communicate-alone", text(c.communicate_alone)},
      {"threads", text(c.threads)},
      {"device", c.device},
      {"backend", c.backend},
      {"mode", c.mode},
      {"precision", c.precision},
      {"cuda-graph", c.cuda_graph},
      {"checkpoint-dir", path(c.checkpoint_dir)},
      {"checkpoint-every", text(c.checkpoint_every)},
      {"keep-last", text(c.keep_last)},
      {"resume", c.resume},
      {"replace-checkpoints", text(c.replace_checkpoints)},
      {"eval-only", text(c.eval_only)},
      {"export-model", path(c.export_model)},
      {"metrics-file", path(c.metrics_file)},
      {"log-every", text(c.log_every)},
      {"progress", c.progress},
      {"tensorboard-dir", path(c.tensorboard_dir)},
      {"report", path(c.report)},
      {"timeline", path(c.timeline)},
      {"timeline-steps", to_string(c.timeline_steps)},
      {"log-all-ranks", text(c.log_all_ranks)},
      {"min-accuracy", text(c.min_accuracy)},
  };
}

}  // namespace mnist_ddp::config
