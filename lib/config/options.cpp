// lib/config/options.cpp — the only file that knows Boost.Program_options.
#include "config/options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <unistd.h>

#include <boost/program_options.hpp>

#include "common/error.hpp"
#include "config/option_error.hpp"

namespace po = boost::program_options;

namespace mnist_ddp::config {
namespace {

constexpr const char* kEnvPrefix = "MNIST_DDP_";
// The MNIST_DDP_* variables that are no option: read by the program (FAULT), by slurm/*.sbatch,
// by scripts/ and .ci/, and set by ctest for the tests. No warning names them.
constexpr std::array kOtherVariables = {
    "MNIST_DDP_FAULT",           "MNIST_DDP_BIN",          "MNIST_DDP_LAUNCHER",
    "MNIST_DDP_CHECKPOINT_ROOT", "MNIST_DDP_MAX_REQUEUES", "MNIST_DDP_SRUN_ARGS",
    "MNIST_DDP_SRUN_WAIT",       "MNIST_DDP_WRAPPER",      "MNIST_DDP_OFFLINE",
    "MNIST_DDP_BASE_MIRROR",     "MNIST_DDP_DATA",         "MNIST_DDP_SOURCE_DIR",
    "MNIST_DDP_BUILD_DIR"};
// --help line width, and the least width left for descriptions.
constexpr unsigned kHelpWidth = 100;
constexpr unsigned kHelpDescriptionWidth = 60;
// Bounds of the options that size memory: far above any real run, they turn an absurd value into
// a usage error instead of a failed allocation or an overflowing conversion.
constexpr int kMaxBatchSize = 1 << 20;  // images per step, for each batch option
constexpr int kMaxThreads = 1024;
constexpr double kMaxBucketMb = 4096;

/// "at most N", for the --help line and the error of an option bounded by `bound`.
template <typename T>
std::string at_most(T bound) {
  std::ostringstream text;
  text << "at most " << bound;
  return text.str();
}

/// A floating-point option whose default --help shows as written ("0.1307", not
/// "0.13070000000000001").
po::typed_value<double>* decimal(double* field, double default_value) {
  std::ostringstream text;
  text << default_value;
  return po::value(field)->default_value(default_value, text.str());
}

/// A boolean option: "--drop-last" alone means true; "--drop-last=false" and "drop-last = 0" in a
/// config file or environment variable work too.
po::typed_value<bool>* flag(bool* field, bool default_value) {
  return po::value(field)
      ->default_value(default_value, default_value ? "true" : "false")
      ->implicit_value(true, "true");
}

/// A file or folder option that is off unless given; --help shows its default as "none".
po::typed_value<std::string>* optional_path(std::string* field) {
  return po::value(field)->default_value("", "none");
}

}  // namespace

/// How Boost.Program_options reads a StepRange (found by argument-dependent lookup, hence in the
/// namespace of StepRange).
void validate(boost::any& value, const std::vector<std::string>& texts, StepRange*, int) {
  po::validators::check_first_occurrence(value);
  value = parse_step_range(po::validators::get_single_string(texts), "timeline-steps");
}

namespace {

/// Options that may come from any source, bound to the fields of `config`.
po::options_description training_options(TrainConfig& config) {
  const TrainConfig defaults;
  const std::string batch_help = "training images per step on each rank, " +
                                 at_most(kMaxBatchSize) + " (global batch = this x ranks)";
  const std::string global_batch_help =
      "training images per step over all ranks, split evenly (instead of --batch-size; 0: off; " +
      at_most(kMaxBatchSize) + "), so one recipe means the same at any number of ranks";
  const std::string test_batch_help =
      "evaluation images per step on each rank, " + at_most(kMaxBatchSize);
  const std::string bucket_help =
      "gradient bucket size in MB of --grad-dtype, " + at_most(kMaxBucketMb) +
      ": each bucket's allreduce starts as soon as its gradients are ready during backward";
  const std::string threads_help = "intra-op threads per rank, " + at_most(kMaxThreads) +
                                   " (0: cores on the node / ranks on the node, at least 1)";
  po::options_description data("Data", kHelpWidth, kHelpDescriptionWidth);
  data.add_options()(
      "data-dir", po::value(&config.data_dir)->default_value(defaults.data_dir),
      "folder with train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
      "t10k-labels-idx1-ubyte (each raw or .gz)")(
      "normalize-mean", decimal(&config.normalize_mean, defaults.normalize_mean),
      "pixel mean subtracted after scaling pixels to [0, 1]")(
      "normalize-std", decimal(&config.normalize_std, defaults.normalize_std),
      "pixel standard deviation divided out after the mean")(
      "drop-last", flag(&config.drop_last, defaults.drop_last),
      "drop the training samples that do not split evenly across ranks instead of padding");

  po::options_description model("Model and optimization", kHelpWidth, kHelpDescriptionWidth);
  model.add_options()(
      "model", po::value(&config.model)->default_value(defaults.model),
      "network: linear (784-10), mlp (784-256-128-10), cnn (conv32-conv64-fc128) or fastcnn "
      "(conv24-conv32-fc256, the net of the fastest MNIST recipe; configs/mnist99.conf)")(
      "epochs", po::value(&config.epochs)->default_value(defaults.epochs),
      "passes over the training set")(
      "batch-size", po::value(&config.batch_size)->default_value(defaults.batch_size),
      batch_help.c_str())(
      "global-batch-size",
      po::value(&config.global_batch_size)->default_value(defaults.global_batch_size),
      global_batch_help.c_str())(
      "test-batch-size",
      po::value(&config.test_batch_size)->default_value(defaults.test_batch_size),
      test_batch_help.c_str())(
      "optimizer", po::value(&config.optimizer)->default_value(defaults.optimizer), "sgd or adam")(
      "lr", decimal(&config.lr, defaults.lr), "learning rate")(
      "momentum", decimal(&config.momentum, defaults.momentum), "SGD momentum, in [0, 1)")(
      "weight-decay", decimal(&config.weight_decay, defaults.weight_decay),
      "L2 penalty applied by the optimizer")(
      "adam-beta1", decimal(&config.adam_beta1, defaults.adam_beta1),
      "Adam's beta1, in [0, 1): the decay of its gradient average")(
      "adam-beta2", decimal(&config.adam_beta2, defaults.adam_beta2),
      "Adam's beta2, in [0, 1): the decay of its squared-gradient average")(
      "lr-schedule", po::value(&config.lr_schedule)->default_value(defaults.lr_schedule),
      "constant; onecycle (PyTorch's OneCycleLR: from lr/25 up to --lr over the first 30% of the "
      "steps of --epochs, then down to lr/25/1e4); or cosine (down to 0 over the steps of "
      "--epochs after the warm-up)")(
      "warmup-steps", po::value(&config.warmup_steps)->default_value(defaults.warmup_steps),
      "with constant or cosine: raise the rate linearly to --lr over this many first steps")(
      "seed", po::value(&config.seed)->default_value(defaults.seed),
      "seed for initialisation and data order; the same on every rank")(
      "max-steps", po::value(&config.max_steps)->default_value(defaults.max_steps),
      "stop after this many optimizer steps (0: no limit); the run still evaluates and summarises")(
      "target-accuracy", decimal(&config.target_accuracy, defaults.target_accuracy),
      "stop as soon as an evaluation reaches this test accuracy (0..1; 0: off) and report the "
      "training time to it")(
      "eval-every", po::value(&config.eval_every)->default_value(defaults.eval_every),
      "also evaluate on the test set every N optimizer steps (0: after each epoch only), so the "
      "step a --target-accuracy is reached is found finely");

  po::options_description distribution("Distribution", kHelpWidth, kHelpDescriptionWidth);
  distribution.add_options()("bucket-mb", decimal(&config.bucket_mb, defaults.bucket_mb),
                             bucket_help.c_str())(
      "grad-accum", po::value(&config.grad_accum)->default_value(defaults.grad_accum),
      "micro-batches of --batch-size per optimizer step; gradients are communicated on the last")(
      "grad-dtype", po::value(&config.grad_dtype)->default_value(defaults.grad_dtype),
      "fp32, bf16 or fp16: the type gradients travel in (averaged back in fp32)")(
      "comm-timeout", decimal(&config.comm_timeout, defaults.comm_timeout),
      "seconds a collective may wait for the other ranks before the job ends with exit 5, "
      "naming the ranks that had not joined")(
      "communicate-alone", flag(&config.communicate_alone, defaults.communicate_alone),
      "a testing aid: a single rank still allreduces its gradient buckets and broadcasts its "
      "parameters, as each of N ranks does (same results; exercises NCCL on one GPU)");

  po::options_description execution("Execution", kHelpWidth, kHelpDescriptionWidth);
  execution.add_options()("threads", po::value(&config.threads)->default_value(defaults.threads),
                          threads_help.c_str())(
      "device", po::value(&config.device)->default_value(defaults.device),
      "auto (cuda when LibTorch has CUDA and sees a GPU, else cpu), cpu or cuda; on cuda each "
      "rank uses GPU local rank % visible GPUs")(
      "backend", po::value(&config.backend)->default_value(defaults.backend),
      "gradient transport: auto (nccl on cuda when built in, else mpi), nccl or mpi (on cuda "
      "through host memory)")(
      "mode", po::value(&config.mode)->default_value(defaults.mode),
      "ddp (one process per device, start with mpirun) or dp (one process drives every visible "
      "GPU, like torch.nn.DataParallel; needs CUDA)")(
      "precision", po::value(&config.precision)->default_value(defaults.precision),
      "fp32 or bf16 (forward under autocast in bfloat16; weights, gradients and optimizer in "
      "fp32)")("cuda-graph", po::value(&config.cuda_graph)->default_value(defaults.cuda_graph),
               "off, auto or on: capture one whole training step (batch, forward, backward, NCCL "
               "allreduces, optimizer) as a CUDA graph and replay it; auto: where a step can be "
               "captured, else eager (the banner says why); on: refused where it cannot");

  po::options_description checkpoints("Checkpoints", kHelpWidth, kHelpDescriptionWidth);
  checkpoints.add_options()(
      "checkpoint-dir", optional_path(&config.checkpoint_dir),
      "rank 0 writes checkpoints here at every epoch end, on SIGTERM/SIGUSR1 (then exits 6) "
      "and every --checkpoint-every steps")(
      "checkpoint-every",
      po::value(&config.checkpoint_every)->default_value(defaults.checkpoint_every),
      "also checkpoint every N optimizer steps (0: epoch ends only)")(
      "keep-last", po::value(&config.keep_last)->default_value(defaults.keep_last),
      "checkpoints of this run to keep in --checkpoint-dir, newest first; pruning never "
      "touches another run's")(
      "resume", po::value(&config.resume)->default_value(defaults.resume),
      "never; auto (the newest intact checkpoint in --checkpoint-dir, if any); or the path of "
      "a checkpoint (.mddp) or its manifest (.json)")(
      "replace-checkpoints", flag(&config.replace_checkpoints, defaults.replace_checkpoints),
      "let a run write into a --checkpoint-dir holding checkpoints it does not continue from "
      "(any, for a fresh start; another run's or its own later ones, for a resume), deleting "
      "them once it has written its first checkpoint; without it such a run exits 2")(
      "eval-only", flag(&config.eval_only, defaults.eval_only),
      "evaluate the --resume checkpoint on the test set and exit; no training")(
      "export-model", optional_path(&config.export_model),
      "after training, save the model alone to this file for inference (torch::load)");

  po::options_description output("Output", kHelpWidth, kHelpDescriptionWidth);
  output.add_options()(
      "metrics-file", optional_path(&config.metrics_file),
      "write JSON Lines metrics (step records every --log-every steps, one per epoch, a "
      "summary) from rank 0 to this file; a resumed run appends to it, any other replaces it")(
      "log-every", po::value(&config.log_every)->default_value(defaults.log_every),
      "every N optimizer steps: a progress line (when not live), a metrics step record and "
      "TensorBoard scalars (0: epoch ends only)")(
      "progress", po::value(&config.progress)->default_value(defaults.progress),
      "auto (a live line when stdout is a terminal, else plain lines), live, lines or off")(
      "tensorboard-dir", optional_path(&config.tensorboard_dir),
      "write TensorBoard event files (loss, accuracy, lr, throughput, comm share) here: a new "
      "file each run, resumed ones too; TensorBoard shows the folder's files as one run")(
      "report", optional_path(&config.report),
      "write a self-contained HTML report (curves, throughput, per-rank step time) to this file")(
      "timeline", optional_path(&config.timeline),
      "write a Chrome trace (chrome://tracing, Perfetto) of every rank's phases and collectives")(
      "timeline-steps",
      po::value(&config.timeline_steps)
          ->default_value(defaults.timeline_steps, to_string(defaults.timeline_steps)),
      "the optimizer steps FIRST:LAST the --timeline records (evaluations and checkpoints "
      "among them too)")("log-all-ranks", flag(&config.log_all_ranks, defaults.log_all_ranks),
                         "let every rank log, prefixed with its rank, not only rank 0")(
      "min-accuracy", decimal(&config.min_accuracy, defaults.min_accuracy),
      "exit with code 1 when the final test accuracy (0..1) is below this");

  po::options_description all;
  all.add(data).add(model).add(distribution).add(execution).add(checkpoints).add(output);
  return all;
}

/// Options that only make sense on the command line.
po::options_description command_line_only(std::string& config_file) {
  po::options_description general("General", kHelpWidth, kHelpDescriptionWidth);
  general.add_options()("help,h", "print this help and exit")(
      "version", "print the versions of mnist_ddp, LibTorch, MPI, NCCL, CUDA and BLAS, and exit")(
      "config", po::value(&config_file),
      "read options from this file (lines of name = value, names as the long options); "
      "the command line and MNIST_DDP_* environment variables take precedence");
  return general;
}

bool has_prefix(const std::string& variable) {
  return variable.compare(0, std::char_traits<char>::length(kEnvPrefix), kEnvPrefix) == 0;
}

/// batch-size for MNIST_DDP_BATCH_SIZE, whose prefix the caller has checked.
std::string option_name_of(const std::string& variable) {
  std::string name = variable.substr(std::char_traits<char>::length(kEnvPrefix));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
    return c == '_' ? '-' : static_cast<char>(std::tolower(c));
  });
  return name;
}

/// MNIST_DDP_BATCH_SIZE for batch-size.
std::string variable_name_of(const std::string& option) {
  std::string name = kEnvPrefix;
  for (const unsigned char c : option) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  }
  return name;
}

/// Maps MNIST_DDP_BATCH_SIZE to batch-size; other variables, and unknown names, map to nothing.
std::string environment_name_to_option(const po::options_description& options,
                                       const std::string& variable) {
  if (!has_prefix(variable)) return "";
  const std::string name = option_name_of(variable);
  return options.find_nothrow(name, /*approx=*/false) != nullptr ? name : "";
}

void store_environment(const po::options_description& options, po::variables_map& values) {
  try {
    po::store(po::parse_environment(options,
                                    [&options](const std::string& variable) {
                                      return environment_name_to_option(options, variable);
                                    }),
              values);
  } catch (po::error& e) {
    throw UsageError(std::string("in the ") + kEnvPrefix +
                     "* environment variables: " + option_error_text(e));
  }
}

void store_config_file(const std::string& path, const po::options_description& options,
                       po::variables_map& values) {
  std::error_code ignored;
  // A folder opens as a stream that reads nothing, which would pass for an empty file.
  if (std::filesystem::is_directory(path, ignored)) {
    throw UsageError("--config file '" + path + "' is a folder, not a file of options");
  }
  std::ifstream file(path);
  if (!file) throw UsageError("cannot open --config file '" + path + "'");
  try {
    po::store(po::parse_config_file(file, options, /*allow_unregistered=*/false), values);
  } catch (po::error& e) {
    throw UsageError("--config file '" + path + "': " + option_error_text(e));
  }
  if (file.bad()) throw UsageError("cannot read --config file '" + path + "'");
}

/// The edits (insertions, deletions, substitutions) that turn `a` into `b`.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

bool is_other_variable(const std::string& variable) {
  return std::find(kOtherVariables.begin(), kOtherVariables.end(), variable) !=
         kOtherVariables.end();
}

/// The warning for `variable`, an MNIST_DDP_* name that maps to no option, with the closest one.
std::string unknown_variable_warning(const std::string& variable,
                                     const po::options_description& training,
                                     const po::options_description& general) {
  const std::string name = option_name_of(variable);
  if (general.find_nothrow(name, /*approx=*/false) != nullptr) {
    return variable + " is not read: --" + name + " is given on the command line only";
  }
  std::string closest;
  size_t closest_distance = std::string::npos;
  for (const auto& option : training.options()) {
    const size_t distance = edit_distance(name, option->long_name());
    if (distance < closest_distance) {
      closest = option->long_name();
      closest_distance = distance;
    }
  }
  return variable + " names no option; did you mean " + variable_name_of(closest) + " (--" +
         closest + ")?";
}

}  // namespace

Command parse_command(int argc, const char* const argv[]) {
  Command command;
  std::string config_file;
  po::options_description training = training_options(command.config);
  po::options_description general = command_line_only(config_file);
  po::options_description command_line;
  command_line.add(general).add(training);

  po::variables_map values;
  try {
    // No positional options: a stray word ("mnist_ddp cnn") is an error, not silently ignored.
    po::store(po::command_line_parser(argc, argv)
                  .options(command_line)
                  .positional(po::positional_options_description())
                  .run(),
              values);
    if (values.count("help")) {
      command.action = Action::kHelp;
      return command;
    }
    if (values.count("version")) {
      command.action = Action::kVersion;
      return command;
    }
    store_environment(training, values);
    if (values.count("config")) {
      store_config_file(values["config"].as<std::string>(), training, values);
    }
    po::notify(values);
  } catch (po::error& e) {
    throw UsageError(option_error_text(e));
  }
  validate(command.config);
  return command;
}

std::vector<std::string> environment_warnings() {
  TrainConfig scratch;
  std::string config_file;
  const po::options_description training = training_options(scratch);
  const po::options_description general = command_line_only(config_file);
  std::vector<std::string> warnings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string variable = text.substr(0, text.find('='));
    if (has_prefix(variable) && !is_other_variable(variable) &&
        environment_name_to_option(training, variable).empty()) {
      warnings.push_back(unknown_variable_warning(variable, training, general));
    }
  }
  return warnings;
}

std::string help_text() {
  TrainConfig scratch;
  std::string config_file;
  po::options_description all(
      "mnist_ddp: data-parallel MNIST training over MPI\n\n"
      "Usage: mpirun -np N mnist_ddp [options]\n\n"
      "Every option but --config can also be set as MNIST_DDP_<NAME> (MNIST_DDP_BATCH_SIZE=128)\n"
      "or in a --config file; the command line wins over the environment, which wins over the "
      "file.\n"
      "Exit codes: 0 done, 1 other failure (or accuracy below --min-accuracy), 2 bad usage,\n"
      "3 bad or missing data, 4 bad checkpoint, 5 communication failure,\n"
      "6 stopped by SIGTERM/SIGUSR1 after writing a checkpoint (resume with --resume auto)",
      kHelpWidth, kHelpDescriptionWidth);
  all.add(command_line_only(config_file)).add(training_options(scratch));
  std::ostringstream text;
  text << all;
  // Boost pads wrapped descriptions with a trailing space; keep the text clean for the README.
  std::string help;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    help += line + '\n';
  }
  return help;
}

namespace {

void require_finite(double value, const char* option) {
  if (!std::isfinite(value)) {
    throw UsageError(std::string("--") + option + " must be a finite number (got " +
                     std::to_string(value) + ")");
  }
}

template <typename T>
void require(bool ok, const char* option, const std::string& rule, const T& value) {
  if (ok) return;
  std::ostringstream message;
  message << "--" << option << " must be " << rule << " (got " << value << ")";
  throw UsageError(message.str());
}

}  // namespace

void validate(const TrainConfig& c) {
  require_finite(c.lr, "lr");
  require_finite(c.bucket_mb, "bucket-mb");
  require_finite(c.comm_timeout, "comm-timeout");
  require_finite(c.momentum, "momentum");
  require_finite(c.weight_decay, "weight-decay");
  require_finite(c.normalize_mean, "normalize-mean");
  require_finite(c.normalize_std, "normalize-std");
  require(c.model == "linear" || c.model == "mlp" || c.model == "cnn" || c.model == "fastcnn",
          "model", "one of linear, mlp, cnn, fastcnn", c.model);
  require(c.optimizer == "sgd" || c.optimizer == "adam", "optimizer", "one of sgd, adam",
          c.optimizer);
  require(c.epochs >= 1, "epochs", "at least 1", c.epochs);
  require(c.batch_size >= 1, "batch-size", "at least 1", c.batch_size);
  require(c.test_batch_size >= 1, "test-batch-size", "at least 1", c.test_batch_size);
  require(c.global_batch_size >= 0, "global-batch-size", "at least 0", c.global_batch_size);
  const std::string max_batch = at_most(kMaxBatchSize);
  require(c.batch_size <= kMaxBatchSize, "batch-size", max_batch, c.batch_size);
  require(c.test_batch_size <= kMaxBatchSize, "test-batch-size", max_batch, c.test_batch_size);
  require(c.global_batch_size <= kMaxBatchSize, "global-batch-size", max_batch,
          c.global_batch_size);
  require(c.lr > 0, "lr", "greater than 0", c.lr);
  require(c.momentum >= 0 && c.momentum < 1, "momentum", "in [0, 1)", c.momentum);
  require(c.weight_decay >= 0, "weight-decay", "at least 0", c.weight_decay);
  require(c.seed >= 0, "seed", "at least 0", c.seed);
  require(c.max_steps >= 0, "max-steps", "at least 0", c.max_steps);
  require(c.target_accuracy >= 0 && c.target_accuracy <= 1, "target-accuracy", "in [0, 1]",
          c.target_accuracy);
  require(c.eval_every >= 0, "eval-every", "at least 0", c.eval_every);
  require(c.threads >= 0, "threads", "at least 0", c.threads);
  require(c.threads <= kMaxThreads, "threads", at_most(kMaxThreads), c.threads);
  require(c.normalize_std > 0, "normalize-std", "greater than 0", c.normalize_std);
  require(c.min_accuracy >= 0 && c.min_accuracy <= 1, "min-accuracy", "in [0, 1]", c.min_accuracy);
  require(c.bucket_mb > 0, "bucket-mb", "greater than 0", c.bucket_mb);
  require(c.bucket_mb <= kMaxBucketMb, "bucket-mb", at_most(kMaxBucketMb), c.bucket_mb);
  require(c.comm_timeout > 0, "comm-timeout", "greater than 0", c.comm_timeout);
  require(c.log_every >= 0, "log-every", "at least 0", c.log_every);
  require(
      c.progress == "auto" || c.progress == "live" || c.progress == "lines" || c.progress == "off",
      "progress", "one of auto, live, lines, off", c.progress);
  require(c.device == "auto" || c.device == "cpu" || c.device == "cuda", "device",
          "one of auto, cpu, cuda", c.device);
  require(c.backend == "auto" || c.backend == "nccl" || c.backend == "mpi", "backend",
          "one of auto, nccl, mpi", c.backend);
  require(c.mode == "ddp" || c.mode == "dp", "mode", "one of ddp, dp", c.mode);
  require(c.precision == "fp32" || c.precision == "bf16", "precision", "one of fp32, bf16",
          c.precision);
  require(c.cuda_graph == "auto" || c.cuda_graph == "on" || c.cuda_graph == "off", "cuda-graph",
          "one of auto, on, off", c.cuda_graph);
  require(c.device != "cpu" || c.backend != "nccl", "backend",
          "mpi or auto with --device cpu (NCCL works on GPU memory only)", c.backend);
  require(c.device != "cpu" || c.mode != "dp", "mode",
          "ddp with --device cpu (dp drives several GPUs from one process)", c.mode);
  require(c.mode != "dp" || c.backend != "nccl", "backend",
          "auto or mpi with --mode dp (one process: its replicas reduce gradients by device "
          "copies, there is no communicator)",
          c.backend);
  // In dp mode a bucket would start before the replicas' gradients are gathered into it.
  require(c.mode != "dp" || !c.communicate_alone, "communicate-alone",
          "off with --mode dp (one process: there is no communication to exercise)", "true");
  require(c.grad_accum >= 1, "grad-accum", "at least 1", c.grad_accum);
  require(c.grad_dtype == "fp32" || c.grad_dtype == "bf16" || c.grad_dtype == "fp16", "grad-dtype",
          "one of fp32, bf16, fp16", c.grad_dtype);
  require(c.checkpoint_every >= 0, "checkpoint-every", "at least 0", c.checkpoint_every);
  require(c.keep_last >= 1, "keep-last", "at least 1", c.keep_last);
  require(c.resume != "auto" || !c.checkpoint_dir.empty(), "resume",
          "a checkpoint path when there is no --checkpoint-dir (auto looks there)", c.resume);
  require(!c.eval_only || c.resume != "never", "resume",
          "auto or a checkpoint path with --eval-only", c.resume);
  require_finite(c.adam_beta1, "adam-beta1");
  require_finite(c.adam_beta2, "adam-beta2");
  require(c.adam_beta1 >= 0 && c.adam_beta1 < 1, "adam-beta1", "in [0, 1)", c.adam_beta1);
  require(c.adam_beta2 >= 0 && c.adam_beta2 < 1, "adam-beta2", "in [0, 1)", c.adam_beta2);
  const TrainConfig defaults;
  require(c.global_batch_size == 0 || c.batch_size == defaults.batch_size, "batch-size",
          "left out with --global-batch-size, which sets it (the global batch / ranks)",
          c.batch_size);
  require(c.optimizer == "adam" || c.adam_beta1 == defaults.adam_beta1, "adam-beta1",
          "left alone with --optimizer sgd (it is Adam's)", c.adam_beta1);
  require(c.optimizer == "adam" || c.adam_beta2 == defaults.adam_beta2, "adam-beta2",
          "left alone with --optimizer sgd (it is Adam's)", c.adam_beta2);
  require(c.lr_schedule == "constant" || c.lr_schedule == "onecycle" || c.lr_schedule == "cosine",
          "lr-schedule", "one of constant, onecycle, cosine", c.lr_schedule);
  require(c.warmup_steps >= 0, "warmup-steps", "at least 0", c.warmup_steps);
  require(c.lr_schedule != "onecycle" || c.warmup_steps == 0, "warmup-steps",
          "0 with --lr-schedule onecycle (its first 30% of steps are the warm-up)", c.warmup_steps);
  require(c.optimizer == "sgd" || c.momentum == 0, "momentum",
          "0 with --optimizer adam (Adam has no momentum option; use sgd)", c.momentum);
}

TrainConfig split_global_batch(TrainConfig config, int ranks) {
  if (config.global_batch_size == 0) return config;
  if (config.global_batch_size % ranks != 0) {
    throw UsageError("--global-batch-size " + std::to_string(config.global_batch_size) +
                     " does not split evenly over " + std::to_string(ranks) +
                     " ranks: give a multiple of " + std::to_string(ranks) +
                     ", or --batch-size per rank");
  }
  config.batch_size = config.global_batch_size / ranks;
  return config;
}

}  // namespace mnist_ddp::config
