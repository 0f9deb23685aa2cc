// lib/config/options.hpp — provides: parse_command (command line + MNIST_DDP_* environment +
// --config file, in that order of precedence), help_text, validate.
#pragma once

#include <string>
#include <vector>

#include "config/train_config.hpp"

namespace mnist_ddp::config {

/// What the command line asks for.
enum class Action { kTrain, kHelp, kVersion };

/// The parsed command: an action and, for kTrain, a validated configuration.
struct Command {
  Action action = Action::kTrain;
  TrainConfig config;
};

/// Parses argv, then MNIST_DDP_* variables, then the --config file; the first source that sets
/// an option wins. Throws UsageError naming the offending option or value.
Command parse_command(int argc, const char* const argv[]);

/// One warning for each MNIST_DDP_* variable of the environment that names no option (and is none
/// of the project's other variables), naming the closest option: parse_command ignores them.
std::vector<std::string> environment_warnings();

/// The --help text: usage line and every option with its default, grouped by topic.
std::string help_text();

/// Checks ranges and choices; throws UsageError such as "--batch-size must be at least 1 (got 0)".
void validate(const TrainConfig& config);

/// `config` for `ranks` ranks: with --global-batch-size, batch_size becomes its share. Throws
/// UsageError when the global batch does not split evenly over the ranks.
TrainConfig split_global_batch(TrainConfig config, int ranks);

}  // namespace mnist_ddp::config
