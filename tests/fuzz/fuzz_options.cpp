// tests/fuzz/fuzz_options.cpp — provides: the libFuzzer harness of parse_command. Input: command
// line arguments, one per line; then optionally a form feed (\f) and the text of a --config file.
// Outcome: a command whose configuration passes validate(), or UsageError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "config/options.hpp"
#include "memory_file.hpp"
#include "outcome.hpp"

extern char** environ;

namespace {

/// Splits `text` at newlines; an empty text has no arguments.
std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    out.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // MNIST_DDP_* variables of the shell would be a hidden part of every input: remove them.
  std::vector<std::string> ours;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string entry = *variable;
    if (entry.rfind("MNIST_DDP_", 0) == 0) ours.push_back(entry.substr(0, entry.find('=')));
  }
  for (const std::string& name : ours) unsetenv(name.c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\f');
  std::vector<std::string> args = lines(input.substr(0, split));
  for (const std::string& arg : args) {
    // The harness alone chooses the config file: a fuzzed "--config /dev/zero" (or any
    // abbreviation Boost accepts, "--co", "--conf") would read forever or from the terminal.
    if (arg.rfind("--co", 0) == 0) return 0;
  }
  std::optional<mnist_ddp::fuzz::MemoryFile> config_file;
  if (split != std::string_view::npos) {
    const std::string_view text = input.substr(split + 1);
    config_file.emplace(text.data(), text.size());
    args.push_back("--config");
    args.push_back(config_file->path());
  }
  // argv as main gets it: the program name, then C strings (an embedded NUL ends an argument).
  std::vector<const char*> argv = {"mnist_ddp"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);

  mnist_ddp::fuzz::expect_only<mnist_ddp::UsageError>([&] {
    const mnist_ddp::config::Command command =
        mnist_ddp::config::parse_command(static_cast<int>(argv.size() - 1), argv.data());
    if (command.action != mnist_ddp::config::Action::kTrain) return;
    // parse_command validated the configuration; validating it again must agree.
    try {
      mnist_ddp::config::validate(command.config);
    } catch (const mnist_ddp::UsageError&) {
      mnist_ddp::fuzz::require_property(false, "a parsed configuration passes validate()");
    }
  });
  return 0;
}
