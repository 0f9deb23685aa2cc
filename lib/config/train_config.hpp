// lib/config/train_config.hpp — provides: TrainConfig, the choice enums, Resume, StepRange.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/networks.hpp"

namespace mnist_ddp::config {

// The options that choose among names, and the names (choice_names), in the enumerators' order.
template <std::size_t N>
using Names = std::array<const char*, N>;
enum class Optimizer { kSgd, kAdam };
constexpr Names<2> choice_names(Optimizer) { return {"sgd", "adam"}; }
enum class Schedule { kConstant, kOneCycle, kCosine };
constexpr Names<3> choice_names(Schedule) { return {"constant", "onecycle", "cosine"}; }
enum class GradDtype { kFp32, kBf16, kFp16 };
constexpr Names<3> choice_names(GradDtype) { return {"fp32", "bf16", "fp16"}; }
enum class Device { kAuto, kCpu, kCuda };
constexpr Names<3> choice_names(Device) { return {"auto", "cpu", "cuda"}; }
enum class Backend { kAuto, kNccl, kMpi };
constexpr Names<3> choice_names(Backend) { return {"auto", "nccl", "mpi"}; }
enum class Mode { kDdp, kDp };
constexpr Names<2> choice_names(Mode) { return {"ddp", "dp"}; }
enum class Precision { kFp32, kBf16 };
constexpr Names<2> choice_names(Precision) { return {"fp32", "bf16"}; }
enum class CudaGraph { kAuto, kOn, kOff };
constexpr Names<3> choice_names(CudaGraph) { return {"auto", "on", "off"}; }
enum class Progress { kAuto, kLive, kLines, kOff };
constexpr Names<4> choice_names(Progress) { return {"auto", "live", "lines", "off"}; }

/// The name of `choice` in its option: "bf16" for Precision::kBf16.
template <typename Choice, typename = std::enable_if_t<std::is_enum_v<Choice>>>
std::string to_string(Choice choice) {
  return choice_names(choice)[static_cast<std::size_t>(choice)];
}

/// --resume: never, auto (the newest intact checkpoint in the checkpoint folder) or a path.
enum class ResumeFrom { kNever, kAuto, kPath };
struct Resume {
  ResumeFrom from = ResumeFrom::kNever;
  std::string path;  // with kPath: a checkpoint (.mddp) or its manifest (.json)
};

/// --timeline-steps: inclusive steps FIRST:LAST.
struct StepRange {
  std::int64_t first = 1;  // 1-based, as optimizer steps are counted
  std::int64_t last = 1;

  bool contains(std::int64_t step) const { return first <= step && step <= last; }
};

/// Every setting, in --help's groups (see option_table.cpp); defaults as PyTorch's DDP tutorial.
struct TrainConfig {
  std::string data_dir = "data/mnist";
  double normalize_mean = 0.1307;  // MNIST's pixel mean and standard deviation
  double normalize_std = 0.3081;
  bool drop_last = false;

  Model model = Model::kLinear;  // its names: common/networks.hpp
  int epochs = 5;
  int batch_size = 64;
  int global_batch_size = 0;
  int test_batch_size = 100;  // not the example's 1000: cnn memory grows with it, speed does not
  Optimizer optimizer = Optimizer::kSgd;
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;  // PyTorch's defaults
  double adam_beta2 = 0.999;
  Schedule lr_schedule = Schedule::kConstant;
  std::int64_t warmup_steps = 0;
  std::int64_t seed = 1;
  std::int64_t max_steps = 0;
  double target_accuracy = 0;
  std::int64_t eval_every = 0;

  double bucket_mb = 25;  // as PyTorch DDP
  int grad_accum = 1;
  GradDtype grad_dtype = GradDtype::kFp32;
  double comm_timeout = 300;  // generous, as PyTorch's NCCL watchdog: slow disks never trip it
  bool communicate_alone = false;

  int threads = 0;
  Device device = Device::kAuto;
  Backend backend = Backend::kAuto;
  Mode mode = Mode::kDdp;
  Precision precision = Precision::kFp32;
  CudaGraph cuda_graph = CudaGraph::kAuto;

  std::string checkpoint_dir;
  std::int64_t checkpoint_every = 0;
  int keep_last = 3;
  Resume resume;
  bool replace_checkpoints = false;
  bool eval_only = false;
  std::string export_model;

  std::string metrics_file;
  bool log_all_ranks = false;
  std::int64_t log_every = 100;
  Progress progress = Progress::kAuto;
  std::string tensorboard_dir;
  std::string report;
  std::string timeline;
  StepRange timeline_steps{1, 1000};  // a window: a long run's trace stays small enough to open
  double min_accuracy = 0.0;
};

}  // namespace mnist_ddp::config
