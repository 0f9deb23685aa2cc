// lib/config/options.hpp — provides: Option, train_options() (the option table), its uses.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "config/train_config.hpp"

namespace mnist_ddp::config {

/// An option's value as parsed, shown and checkpointed; choices, ranges and --resume as text.
using Value = std::variant<bool, int, std::int64_t, double, std::string>;

/// Throws UsageError "--option must be RULE (got GOT)"; `option` may end in its letter (",b").
[[noreturn]] void refuse(const std::string& option, const std::string& rule,
                         const std::string& got);

/// A rule of an option's value, named as its error names it: "at least 1".
struct Check {
  std::string rule;
  std::function<bool(const Value&)> holds;
};
Check at_least(double limit);
Check greater_than(double limit);
Check at_most(double limit);
Check in_unit_interval(bool with_one);  // [0, 1] or [0, 1)

/// Which ranks an option concerns; each scope holds the ones before it.
enum class Scope {
  kRank,      // may differ between ranks: each node may keep its data elsewhere
  kJob,       // the same on every rank: ranks compare it before the first collective it shapes
  kTraining,  // a checkpoint only continues a run with the same value (its training shape)
};

/// An option: --name on the command line (mnist_ddp's also MNIST_DDP_NAME in the environment,
/// `name = value` in a --config file). Its default is its member's in Config{}.
template <typename Config>
struct BasicOption {
  std::string name;  // "min-bytes,b": also -b
  Scope scope;
  std::vector<Check> checks;  // beyond a finite number, which a floating-point one must be
  std::string help;
  std::string unit;  // after the value in the banner
  std::function<Value(const Config&)> get;
  std::function<void(Config&, const Value&)> set;  // throws UsageError for bad text
};
template <typename Config>  // the options under their --help headings
using BasicOptionTable = std::vector<std::pair<std::string, std::vector<BasicOption<Config>>>>;
using Option = BasicOption<TrainConfig>;
using OptionTable = BasicOptionTable<TrainConfig>;

/// mnist_ddp's options (option_table.cpp), in --help order.
const OptionTable& train_options();

std::string to_string(const Resume& resume);  // "never", "auto" or the path
void read(const std::string& text, const std::string& option, Resume& into);
std::string to_string(const StepRange& range);  // "FIRST:LAST", as read reads it
/// Reads "FIRST:LAST" with 1 <= FIRST <= LAST; throws UsageError naming `option` and the text.
void read(const std::string& text, const std::string& option, StepRange& into);
/// Reads the choice named `text`, or throws UsageError naming the choices.
template <typename Choice>
void read(const std::string& text, const std::string& option, Choice& into) {
  const auto names = choice_names(Choice{});
  const auto found = std::find(names.begin(), names.end(), text);
  if (found == names.end()) {
    std::string rule = "one of";
    for (std::size_t i = 0; i < names.size(); ++i) rule += (i ? ", " : " ") + std::string(names[i]);
    refuse(option, rule, text);
  }
  into = static_cast<Choice>(found - names.begin());
}

/// The entry of option `name`, which sets `member`.
template <typename Config, typename T>
BasicOption<Config> option(std::string name, T Config::*member, Scope scope,
                           std::vector<Check> checks, std::string help, std::string unit = "") {
  BasicOption<Config> entry{
      std::move(name), scope, std::move(checks), std::move(help), std::move(unit), {}, {}};
  if constexpr (std::is_constructible_v<Value, T>) {
    entry.get = [member](const Config& config) -> Value { return config.*member; };
    entry.set = [member](Config& config, const Value& v) { config.*member = std::get<T>(v); };
  } else {  // a choice, a step range or --resume: text
    entry.get = [member](const Config& config) -> Value { return to_string(config.*member); };
    entry.set = [member, name = entry.name](Config& config, const Value& v) {
      read(std::get<std::string>(v), name, config.*member);
    };
  }
  return entry;
}

/// (name, value with unit, "-" for no path) of the options of at least `scope`, in --help order:
/// the banner's table, and what ranks compare.
std::vector<std::pair<std::string, std::string>> describe_config(
    const TrainConfig& config, Scope scope = Scope::kRank,
    const OptionTable& options = train_options());

/// What the command line asks for.
enum class Action { kTrain, kHelp, kVersion };

/// The parsed command: an action and, for kTrain, a validated configuration.
struct Command {
  Action action = Action::kTrain;
  TrainConfig config;
};

/// Parses argv, then MNIST_DDP_* variables, then the --config file; the first source that sets
/// an option wins. Throws UsageError naming the offending option or value.
Command parse_command(int argc, const char* const argv[],
                      const OptionTable& options = train_options());

/// For each unknown MNIST_DDP_* variable (parse_command ignores it), a warning naming the closest.
std::vector<std::string> environment_warnings(const OptionTable& options = train_options());

/// The --help text: usage line and every option with its default, grouped by topic.
std::string help_text(const OptionTable& options = train_options());

/// Checks each option's value, then the rules between options; throws UsageError such as
/// "--batch-size must be at least 1 (got 0)".
void validate(const TrainConfig& config, const OptionTable& options = train_options());

/// `config` with batch_size the per-rank share of --global-batch-size; UsageError if uneven.
TrainConfig split_global_batch(TrainConfig config, int ranks);

}  // namespace mnist_ddp::config
