// lib/config/options.cpp — the only file that knows Boost.Program_options.
#include "config/options.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include <unistd.h>

#include <boost/program_options.hpp>

#include "common/error.hpp"
#include "config/bench_options.hpp"

namespace po = boost::program_options;

namespace mnist_ddp::config {
namespace {

constexpr const char* kEnvPrefix = "MNIST_DDP_";
// MNIST_DDP_* variables that are no option (testing aids, scripts'): no warning names them.
constexpr std::array kOtherVariables = {"MNIST_DDP_FAULT",
                                        "MNIST_DDP_BIN",
                                        "MNIST_DDP_LAUNCHER",
                                        "MNIST_DDP_CHECKPOINT_ROOT",
                                        "MNIST_DDP_MAX_REQUEUES",
                                        "MNIST_DDP_SRUN_ARGS",
                                        "MNIST_DDP_SRUN_WAIT",
                                        "MNIST_DDP_WRAPPER",
                                        "MNIST_DDP_OFFLINE",
                                        "MNIST_DDP_BASE_MIRROR",
                                        "MNIST_DDP_DATA",
                                        "MNIST_DDP_SOURCE_DIR",
                                        "MNIST_DDP_BUILD_DIR",
                                        "MNIST_DDP_REHEARSE_GRAPHS",
                                        "MNIST_DDP_SIMULATE_BLAS_FALLBACK"};
// --help line width, and the least width left for descriptions.
constexpr unsigned kHelpWidth = 100;
constexpr unsigned kHelpDescriptionWidth = 60;

/// error_with_option_name's protected substitutions, reached through a derived member pointer.
struct Substitutions : po::error_with_option_name {
  static std::map<std::string, std::string>& of(po::error_with_option_name& error) {
    return error.*(&Substitutions::m_substitutions);
  }
};

// Note [Boost option error placeholders]: Boost 1.74 substitutes %value% etc. until none is left,
// so user text holding one loops forever; its '%' are shown as "%25" (no placeholder starts "25").
/// `error.what()`, but it always returns.
std::string option_error_text(po::error& error) {
  if (auto* named = dynamic_cast<po::error_with_option_name*>(&error)) {
    for (auto& [placeholder, text] : Substitutions::of(*named)) {
      if (std::count(text.begin(), text.end(), '%') < 2) continue;
      std::string escaped;
      for (char c : text) escaped += c == '%' ? std::string("%25") : std::string(1, c);
      text = escaped;
    }
  }
  return error.what();
}

/// The whole of `text` as a number, or false.
bool read_number(std::string_view text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end && !text.empty();
}

/// `value` as a number; NaN, which no bound admits, for text.
double number(const Value& value) {
  return std::visit(
      [](const auto& v) -> double {
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) return v;
        return std::nan("");
      },
      value);
}

/// `value` as the banner shows it; a double in the fewest digits (6+) that read back exactly,
/// as ranks compare options by this text.
std::string text_of(const Value& value) {
  for (int digits = 6;; ++digits) {
    std::ostringstream text;
    text << std::boolalpha << std::setprecision(digits);
    std::visit([&](const auto& v) { text << v; }, value);
    const auto* number = std::get_if<double>(&value);
    if (!number || digits == std::numeric_limits<double>::max_digits10 ||
        std::strtod(text.str().c_str(), nullptr) == *number) {
      return text.str();
    }
  }
}

/// The check "RULE LIMIT", which `holds(value, limit)` decides.
Check bound(const std::string& rule, double limit, std::function<bool(double, double)> holds) {
  return {rule + " " + text_of(limit),
          [limit, holds](const Value& value) { return holds(number(value), limit); }};
}

/// Throws "--option must be RULE (got VALUE)" unless `ok`.
void require(bool ok, const std::string& option, const std::string& rule, const Value& got) {
  if (!ok) refuse(option, rule, text_of(got));
}

/// How Boost.Program_options reads `option`: its type, its default ("none" for an empty path); a
/// flag alone means true.
template <typename Config>
po::value_semantic* semantic(const BasicOption<Config>& option) {
  const Value value = option.get(Config{});
  const std::string shown = text_of(value).empty() ? "none" : text_of(value);
  return std::visit(
      [&](const auto& default_value) -> po::value_semantic* {
        using T = std::decay_t<decltype(default_value)>;
        auto* typed = po::value<T>()->default_value(default_value, shown);
        if constexpr (std::is_same_v<T, bool>) typed->implicit_value(true, "true");
        return typed;
      },
      value);
}

/// The options of `options` under their headings.
template <typename Config>
po::options_description described(const BasicOptionTable<Config>& options) {
  po::options_description all;
  for (const auto& [title, group] : options) {
    po::options_description section(title, kHelpWidth, kHelpDescriptionWidth);
    for (const BasicOption<Config>& option : group) {
      section.add_options()(option.name.c_str(), semantic(option), option.help.c_str());
    }
    all.add(section);
  }
  return all;
}

/// --help, the only option of every program that sets nothing.
po::options_description help_option() {
  po::options_description general("General", kHelpWidth, kHelpDescriptionWidth);
  general.add_options()("help,h", "print this help and exit");
  return general;
}

/// mnist_ddp's options that only make sense on the command line.
po::options_description command_line_only() {
  po::options_description general = help_option();
  general.add_options()(
      "version", "print the versions of mnist_ddp, LibTorch, MPI, NCCL, CUDA and BLAS, and exit")(
      "config", po::value<std::string>(),
      "read options from this file (lines of name = value, names as the long options); "
      "the command line and MNIST_DDP_* environment variables take precedence");
  return general;
}

/// The options argv gives, by `options`; UsageError for an unknown or malformed one.
po::variables_map command_line_values(int argc, const char* const argv[],
                                      const po::options_description& options) {
  po::variables_map values;
  try {
    // No positional options: a stray word ("mnist_ddp cnn") is an error, not silently ignored.
    po::store(po::command_line_parser(argc, argv)
                  .options(options)
                  .positional(po::positional_options_description())
                  .run(),
              values);
  } catch (po::error& e) {
    throw UsageError(option_error_text(e));
  }
  return values;
}

/// Sets in `config` each option of `options` that `values` holds, not as its default.
template <typename Config>
void set_given(const po::variables_map& values, const BasicOptionTable<Config>& options,
               Config& config) {
  for (const auto& [title, group] : options) {
    for (const BasicOption<Config>& option : group) {
      const po::variable_value& given = values[option.name.substr(0, option.name.find(','))];
      if (given.empty() || given.defaulted()) continue;
      std::visit([&](const auto& v) { option.set(config, given.as<std::decay_t<decltype(v)>>()); },
                 option.get(config));
    }
  }
}

/// Checks each option's value: a finite number, and its own checks.
template <typename Config>
void check_each(const Config& config, const BasicOptionTable<Config>& options) {
  for (const auto& [title, group] : options) {
    for (const BasicOption<Config>& option : group) {
      const Value value = option.get(config);
      const auto* number = std::get_if<double>(&value);
      require(!number || std::isfinite(*number), option.name, "a finite number", value);
      for (const Check& check : option.checks) {
        require(check.holds(value), option.name, check.rule, value);
      }
    }
  }
}

/// The --help text: `caption`, then `general`'s options and `options`.
std::string help_text_of(const std::string& caption, const po::options_description& general,
                         const po::options_description& options) {
  po::options_description all(caption, kHelpWidth, kHelpDescriptionWidth);
  all.add(general).add(options);
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

/// batch-size for MNIST_DDP_BATCH_SIZE; "" for a variable without the prefix.
std::string option_name_of(const std::string& variable) {
  if (variable.rfind(kEnvPrefix, 0) != 0) return "";
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
  const std::string name = option_name_of(variable);
  return !name.empty() && options.find_nothrow(name, /*approx=*/false) != nullptr ? name : "";
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

void refuse(const std::string& option, const std::string& rule, const std::string& got) {
  throw UsageError("--" + option.substr(0, option.find(',')) + " must be " + rule + " (got " + got +
                   ")");
}

Check at_least(double limit) { return bound("at least", limit, std::greater_equal<>()); }
Check greater_than(double limit) { return bound("greater than", limit, std::greater<>()); }
Check at_most(double limit) { return bound("at most", limit, std::less_equal<>()); }

Check in_unit_interval(bool with_one) {
  return {with_one ? "in [0, 1]" : "in [0, 1)", [with_one](const Value& value) {
            const double v = number(value);
            return v >= 0 && (with_one ? v <= 1 : v < 1);
          }};
}

std::string to_string(const Resume& resume) {
  if (resume.from == ResumeFrom::kPath) return resume.path;
  return resume.from == ResumeFrom::kAuto ? "auto" : "never";
}

void read(const std::string& text, const std::string&, Resume& into) {
  into = text == "never"  ? Resume{}
         : text == "auto" ? Resume{ResumeFrom::kAuto, ""}
                          : Resume{ResumeFrom::kPath, text};
}

std::string to_string(const StepRange& range) {
  return std::to_string(range.first) + ":" + std::to_string(range.last);
}

void read(const std::string& text, const std::string& option, StepRange& into) {
  const size_t colon = text.find(':');
  const std::string quoted = "'" + text + "'";
  StepRange range;
  if (colon == std::string::npos ||
      !read_number(std::string_view(text).substr(0, colon), range.first) ||
      !read_number(std::string_view(text).substr(colon + 1), range.last)) {
    refuse(option, "FIRST:LAST, two step numbers such as 1:1000", quoted);
  }
  if (range.first < 1) refuse(option, "a range that starts at step 1 or later", quoted);
  if (range.last < range.first) {
    refuse(option, "a range whose last step is not before its first", quoted);
  }
  into = range;
}

std::vector<std::pair<std::string, std::string>> describe_config(const TrainConfig& config,
                                                                 Scope scope,
                                                                 const OptionTable& options) {
  std::vector<std::pair<std::string, std::string>> described;
  for (const auto& [title, group] : options) {
    for (const Option& option : group) {
      if (option.scope < scope) continue;
      const std::string text = text_of(option.get(config));
      described.emplace_back(option.name, text.empty() ? "-" : text + option.unit);
    }
  }
  return described;
}

Command parse_command(int argc, const char* const argv[], const OptionTable& options) {
  Command command;
  const po::options_description training = described(options);
  po::options_description command_line;
  command_line.add(command_line_only()).add(training);

  po::variables_map values = command_line_values(argc, argv, command_line);
  if (values.count("help") || values.count("version")) {
    command.action = values.count("help") ? Action::kHelp : Action::kVersion;
    return command;
  }
  store_environment(training, values);
  if (values.count("config")) {
    store_config_file(values["config"].as<std::string>(), training, values);
  }
  set_given(values, options, command.config);
  validate(command.config, options);
  return command;
}

std::vector<std::string> environment_warnings(const OptionTable& options) {
  const po::options_description training = described(options);
  const po::options_description general = command_line_only();
  std::vector<std::string> warnings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string variable = text.substr(0, text.find('='));
    const bool other = std::count(kOtherVariables.begin(), kOtherVariables.end(), variable) > 0;
    if (!option_name_of(variable).empty() && !other &&
        environment_name_to_option(training, variable).empty()) {
      warnings.push_back(unknown_variable_warning(variable, training, general));
    }
  }
  return warnings;
}

std::string help_text(const OptionTable& options) {
  return help_text_of(
      "mnist_ddp: data-parallel MNIST training over MPI\n\n"
      "Usage: mpirun -np N mnist_ddp [options]\n\n"
      "Every option but --config can also be set as MNIST_DDP_<NAME> (MNIST_DDP_BATCH_SIZE=128)\n"
      "or in a --config file; the command line wins over the environment, which wins over the "
      "file.\n"
      "Exit codes: 0 done, 1 other failure (or accuracy below --min-accuracy), 2 bad usage,\n"
      "3 bad or missing data, 4 bad checkpoint, 5 communication failure,\n"
      "6 stopped by SIGTERM/SIGUSR1 after writing a checkpoint (resume with --resume auto)",
      command_line_only(), described(options));
}

void validate(const TrainConfig& c, const OptionTable& options) {
  check_each(c, options);
  // The rules between options.
  require(c.device != Device::kCpu || c.backend != Backend::kNccl, "backend",
          "mpi or auto with --device cpu (NCCL works on GPU memory only)", to_string(c.backend));
  require(c.device != Device::kCpu || c.mode != Mode::kDp, "mode",
          "ddp with --device cpu (dp drives several GPUs from one process)", to_string(c.mode));
  require(c.mode != Mode::kDp || c.backend != Backend::kNccl, "backend",
          "auto or mpi with --mode dp (one process: its replicas reduce gradients by device "
          "copies, there is no communicator)",
          to_string(c.backend));
  // In dp mode a bucket would start before the replicas' gradients are gathered into it.
  require(c.mode != Mode::kDp || !c.communicate_alone, "communicate-alone",
          "off with --mode dp (one process: there is no communication to exercise)", true);
  require(c.resume.from != ResumeFrom::kAuto || !c.checkpoint_dir.empty(), "resume",
          "a checkpoint path when there is no --checkpoint-dir (auto looks there)",
          to_string(c.resume));
  require(!c.eval_only || c.resume.from != ResumeFrom::kNever, "resume",
          "auto or a checkpoint path with --eval-only", to_string(c.resume));
  const TrainConfig defaults;
  require(c.global_batch_size == 0 || c.batch_size == defaults.batch_size, "batch-size",
          "left out with --global-batch-size, which sets it (the global batch / ranks)",
          c.batch_size);
  require(c.optimizer == Optimizer::kAdam || c.adam_beta1 == defaults.adam_beta1, "adam-beta1",
          "left alone with --optimizer sgd (it is Adam's)", c.adam_beta1);
  require(c.optimizer == Optimizer::kAdam || c.adam_beta2 == defaults.adam_beta2, "adam-beta2",
          "left alone with --optimizer sgd (it is Adam's)", c.adam_beta2);
  require(c.lr_schedule != Schedule::kOneCycle || c.warmup_steps == 0, "warmup-steps",
          "0 with --lr-schedule onecycle (its first 30% of steps are the warm-up)", c.warmup_steps);
  require(c.optimizer == Optimizer::kSgd || c.momentum == 0, "momentum",
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

BenchConfig parse_bench_command(int argc, const char* const argv[]) {
  BenchConfig config;
  po::options_description command_line = help_option();
  command_line.add(described(bench_options()));
  const po::variables_map values = command_line_values(argc, argv, command_line);
  config.help = values.count("help") > 0;
  set_given(values, bench_options(), config);
  check_each(config, bench_options());
  require(config.max_bytes >= config.min_bytes, "max-bytes",
          "at least --min-bytes, " + std::to_string(config.min_bytes), config.max_bytes);
  return config;
}

std::string bench_help_text() {
  return help_text_of(
      "allreduce_bench: time the training's allreduce over message sizes, as nccl-tests\n\n"
      "Usage: mpirun -np N allreduce_bench [options]\n"
      "Prints time, algorithm bandwidth (size / time) and bus bandwidth (algbw * 2(n-1)/n) per\n"
      "size, checks every result and exits 1 when any element is wrong",
      help_option(), described(bench_options()));
}

}  // namespace mnist_ddp::config
