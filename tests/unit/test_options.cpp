// tests/unit/test_options.cpp — parse_command: the documented defaults, every option of the
// option table from each source (command line, MNIST_DDP_* variables, --config file), their
// precedence, every validation rule, and an entry added to the table reaching every one of them.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "checkpoint/training_checkpoint.hpp"
#include "common/error.hpp"
#include "config/options.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using config::Action;
using config::Command;
using config::parse_command;
using config::TrainConfig;

using Shown = std::map<std::string, std::string>;  // option name -> value as describe_config shows

/// The defaults as the README's usage block and --help document them. Literals on purpose: a
/// changed default must change this table too, not pass because both sides read TrainConfig{}.
const Shown kDocumentedDefaults = {
    {"data-dir", "data/mnist"},
    {"normalize-mean", "0.1307"},
    {"normalize-std", "0.3081"},
    {"drop-last", "false"},
    {"model", "linear"},
    {"epochs", "5"},
    {"batch-size", "64 per rank"},
    {"global-batch-size", "0"},
    {"test-batch-size", "100 per rank"},
    {"optimizer", "sgd"},
    {"lr", "0.01"},
    {"momentum", "0"},
    {"weight-decay", "0"},
    {"adam-beta1", "0.9"},
    {"adam-beta2", "0.999"},
    {"lr-schedule", "constant"},
    {"warmup-steps", "0"},
    {"seed", "1"},
    {"max-steps", "0"},
    {"target-accuracy", "0"},
    {"eval-every", "0"},
    {"bucket-mb", "25"},
    {"grad-accum", "1"},
    {"grad-dtype", "fp32"},
    {"comm-timeout", "300 s"},
    {"communicate-alone", "false"},
    {"threads", "0"},
    {"device", "auto"},
    {"backend", "auto"},
    {"mode", "ddp"},
    {"precision", "fp32"},
    {"cuda-graph", "auto"},
    {"checkpoint-dir", "-"},
    {"checkpoint-every", "0"},
    {"keep-last", "3"},
    {"resume", "never"},
    {"replace-checkpoints", "false"},
    {"eval-only", "false"},
    {"export-model", "-"},
    {"metrics-file", "-"},
    {"log-every", "100"},
    {"progress", "auto"},
    {"tensorboard-dir", "-"},
    {"report", "-"},
    {"timeline", "-"},
    {"timeline-steps", "1:1000"},
    {"log-all-ranks", "false"},
    {"min-accuracy", "0"},
};

/// One option away from its default: the words that set it, and every value that changes.
struct OptionCase {
  std::vector<const char*> args;
  Shown changed;
};

/// A row for every option of the table (checked below, so a new option cannot go untested).
const std::vector<OptionCase> kOptionCases = {
    {{"--data-dir", "/data/x"}, {{"data-dir", "/data/x"}}},
    {{"--normalize-mean", "0.5"}, {{"normalize-mean", "0.5"}}},
    {{"--normalize-std", "0.25"}, {{"normalize-std", "0.25"}}},
    {{"--drop-last"}, {{"drop-last", "true"}}},
    {{"--model", "cnn"}, {{"model", "cnn"}}},
    {{"--epochs", "3"}, {{"epochs", "3"}}},
    {{"--batch-size", "128"}, {{"batch-size", "128 per rank"}}},
    {{"--global-batch-size", "256"}, {{"global-batch-size", "256"}}},
    {{"--test-batch-size", "500"}, {{"test-batch-size", "500 per rank"}}},
    {{"--optimizer", "adam"}, {{"optimizer", "adam"}}},
    {{"--lr", "0.001"}, {{"lr", "0.001"}}},
    {{"--momentum", "0.9"}, {{"momentum", "0.9"}}},
    {{"--weight-decay", "0.0005"}, {{"weight-decay", "0.0005"}}},
    // Adam's betas only with Adam.
    {{"--optimizer", "adam", "--adam-beta1", "0.7"},
     {{"optimizer", "adam"}, {"adam-beta1", "0.7"}}},
    {{"--optimizer", "adam", "--adam-beta2", "0.9"},
     {{"optimizer", "adam"}, {"adam-beta2", "0.9"}}},
    {{"--lr-schedule", "onecycle"}, {{"lr-schedule", "onecycle"}}},
    {{"--warmup-steps", "100"}, {{"warmup-steps", "100"}}},
    {{"--seed", "42"}, {{"seed", "42"}}},
    {{"--max-steps", "100"}, {{"max-steps", "100"}}},
    {{"--target-accuracy", "0.99"}, {{"target-accuracy", "0.99"}}},
    {{"--eval-every", "50"}, {{"eval-every", "50"}}},
    {{"--bucket-mb", "0.5"}, {{"bucket-mb", "0.5"}}},
    {{"--grad-accum", "4"}, {{"grad-accum", "4"}}},
    {{"--grad-dtype", "bf16"}, {{"grad-dtype", "bf16"}}},
    {{"--comm-timeout", "30"}, {{"comm-timeout", "30 s"}}},
    {{"--communicate-alone"}, {{"communicate-alone", "true"}}},
    {{"--threads", "2"}, {{"threads", "2"}}},
    {{"--device", "cpu"}, {{"device", "cpu"}}},
    {{"--backend", "mpi"}, {{"backend", "mpi"}}},
    {{"--mode", "dp"}, {{"mode", "dp"}}},
    {{"--precision", "bf16"}, {{"precision", "bf16"}}},
    {{"--cuda-graph", "off"}, {{"cuda-graph", "off"}}},
    {{"--checkpoint-dir", "/scratch/ckpt"}, {{"checkpoint-dir", "/scratch/ckpt"}}},
    {{"--checkpoint-every", "50"}, {{"checkpoint-every", "50"}}},
    {{"--keep-last", "5"}, {{"keep-last", "5"}}},
    {{"--resume", "run/ckpt-step-000000100.mddp"}, {{"resume", "run/ckpt-step-000000100.mddp"}}},
    // --eval-only needs a checkpoint to evaluate.
    {{"--eval-only", "--resume", "c.mddp"}, {{"eval-only", "true"}, {"resume", "c.mddp"}}},
    {{"--replace-checkpoints"}, {{"replace-checkpoints", "true"}}},
    {{"--export-model", "model.pt"}, {{"export-model", "model.pt"}}},
    {{"--metrics-file", "m.jsonl"}, {{"metrics-file", "m.jsonl"}}},
    {{"--log-every", "10"}, {{"log-every", "10"}}},
    {{"--progress", "lines"}, {{"progress", "lines"}}},
    {{"--tensorboard-dir", "tb"}, {{"tensorboard-dir", "tb"}}},
    {{"--report", "r.html"}, {{"report", "r.html"}}},
    {{"--timeline", "t.json"}, {{"timeline", "t.json"}}},
    {{"--timeline-steps", "5:9"}, {{"timeline-steps", "5:9"}}},
    {{"--log-all-ranks"}, {{"log-all-ranks", "true"}}},
    {{"--min-accuracy", "0.9"}, {{"min-accuracy", "0.9"}}},
};

/// Parses `args` as if given after the program name, as options of `options`.
Command parse(std::vector<const char*> args,
              const config::OptionTable& options = config::train_options()) {
  args.insert(args.begin(), "mnist_ddp");
  return parse_command(static_cast<int>(args.size()), args.data(), options);
}

/// The UsageError message for `args`.
std::string usage_error(const std::vector<const char*>& args) {
  return error_message<UsageError>([&] { parse(args); });
}

/// Every option of `options` (whose scope is at least `scope`) as describe_config shows it.
Shown shown(const TrainConfig& config, config::Scope scope = config::Scope::kRank,
            const config::OptionTable& options = config::train_options()) {
  const auto described = config::describe_config(config, scope, options);
  return Shown(described.begin(), described.end());
}

/// The long options --help lists ("  --name ..." lines), but --help, --version and --config.
std::set<std::string> options_in_help() {
  std::set<std::string> names;
  std::istringstream lines(config::help_text());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  --", 0) != 0) continue;
    const std::string name = line.substr(4, line.find_first_of(" [", 4) - 4);
    if (name != "help" && name != "version" && name != "config") names.insert(name);
  }
  return names;
}

template <typename Map>
std::set<std::string> keys(const Map& map) {
  std::set<std::string> names;
  for (const auto& [name, value] : map) names.insert(name);
  return names;
}

/// `args` as (option, value) pairs: a flag without a value means "true".
std::vector<std::pair<std::string, std::string>> option_values(
    const std::vector<const char*>& args) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = std::string(args[i]).substr(2);
    const bool has_value = i + 1 < args.size() && std::string(args[i + 1]).rfind("--", 0) != 0;
    pairs.emplace_back(name, has_value ? args[++i] : "true");
  }
  return pairs;
}

/// MNIST_DDP_GRAD_ACCUM for grad-accum.
std::string variable_name(const std::string& option) {
  std::string name = "MNIST_DDP_";
  for (const char c : option) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

/// Sets an environment variable for the lifetime of the object, then restores the old state,
/// so no test leaks configuration into the next.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, /*overwrite=*/1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), /*overwrite=*/1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_SUITE("parse_command") {
  TEST_CASE("no arguments give the documented defaults") {
    const Command command = parse({});
    CHECK(command.action == Action::kTrain);
    CHECK(shown(command.config) == kDocumentedDefaults);
  }

  TEST_CASE("the option table, --help, the defaults and the cases here list the same options") {
    const std::set<std::string> table = keys(shown(TrainConfig{}));
    CHECK(options_in_help() == table);
    CHECK(keys(kDocumentedDefaults) == table);
    std::set<std::string> covered;
    for (const OptionCase& c : kOptionCases) {
      for (const auto& [name, value] : c.changed) covered.insert(name);
    }
    CHECK(covered == table);
  }

  TEST_CASE("each option sets its own value and no other, from every source") {
    TempDir dir;
    for (const OptionCase& c : kOptionCases) {
      const std::string option = c.args[0];
      CAPTURE(option);
      Shown want = kDocumentedDefaults;
      for (const auto& [name, value] : c.changed) want[name] = value;
      CHECK(shown(parse(c.args).config) == want);

      std::string file_text;
      std::vector<std::unique_ptr<ScopedEnv>> variables;
      for (const auto& [name, value] : option_values(c.args)) {
        file_text += name + " = " + value + "\n";
        variables.push_back(
            std::make_unique<ScopedEnv>(variable_name(name).c_str(), value.c_str()));
      }
      CHECK(shown(parse({}).config) == want);  // from the MNIST_DDP_* variables
      variables.clear();
      const std::string path = dir.file("run.cfg");
      write_file(path, Bytes(file_text.begin(), file_text.end()));
      CHECK(shown(parse({"--config", path.c_str()}).config) == want);
    }
  }

  TEST_CASE("--help and --version ask for those actions") {
    CHECK(parse({"--help"}).action == Action::kHelp);
    CHECK(parse({"-h"}).action == Action::kHelp);
    CHECK(parse({"--version"}).action == Action::kVersion);
  }

  TEST_CASE("MNIST_DDP_* variables are used and the command line wins over them") {
    ScopedEnv batch("MNIST_DDP_BATCH_SIZE", "256");
    ScopedEnv data_dir("MNIST_DDP_DATA_DIR", "/env/data");
    ScopedEnv epochs("MNIST_DDP_EPOCHS", "9");
    ScopedEnv unrelated("MNIST_DDP_NOT_AN_OPTION", "whatever");  // ignored, not an error
    const TrainConfig config = parse({"--epochs", "2"}).config;
    CHECK(config.batch_size == 256);
    CHECK(config.data_dir == "/env/data");
    CHECK(config.epochs == 2);
  }

  TEST_CASE("--config values are used; the environment and command line win over them") {
    TempDir dir;
    const std::string path = dir.file("run.cfg");
    const std::string text = "epochs = 7\nbatch-size = 32\nlr = 0.5\nmodel = mlp\n";
    write_file(path, Bytes(text.begin(), text.end()));
    ScopedEnv batch("MNIST_DDP_BATCH_SIZE", "16");
    ScopedEnv lr("MNIST_DDP_LR", "0.2");
    const TrainConfig config = parse({"--config", path.c_str(), "--lr", "0.3"}).config;
    CHECK(config.model == config::Model::kMlp);  // file only
    CHECK(config.epochs == 7);                   // file only
    CHECK(config.batch_size == 16);              // environment over file
    CHECK(config.lr == 0.3);                     // command line over environment and file
  }

  TEST_CASE("unknown options, bad config files and non-numbers are usage errors") {
    CHECK(contains(usage_error({"--bogus", "1"}), "--bogus"));
    CHECK(contains(usage_error({"--epochs", "three"}), "--epochs"));
    CHECK(contains(usage_error({"--epochs", "three"}), "three"));

    TempDir dir;
    const std::string missing = dir.file("absent.cfg");
    CHECK(contains(usage_error({"--config", missing.c_str()}),
                   "cannot open --config file '" + missing + "'"));
    // Both open as streams that read nothing; neither may pass for an empty file.
    CHECK(contains(usage_error({"--config", dir.path().c_str()}),
                   "--config file '" + dir.path() + "' is a folder, not a file of options"));
    CHECK(contains(usage_error({"--config", "/proc/self/mem"}),  // reading its start fails
                   "cannot read --config file '/proc/self/mem'"));

    const std::string unknown_key = dir.file("unknown.cfg");
    const std::string text = "color = 1\n";
    write_file(unknown_key, Bytes(text.begin(), text.end()));
    const std::string message = usage_error({"--config", unknown_key.c_str()});
    INFO("message: ", message);
    CHECK(contains(message, unknown_key));
    CHECK(contains(message, "color"));
  }

  // Found by tests/fuzz/fuzz_options: Boost's what() replaced "%value%" by the value until none
  // was left, so a value or name holding a placeholder hung the program (Note [Boost option
  // error placeholders] in lib/config/options.cpp).
  TEST_CASE("options and values that hold Boost's message placeholders are usage errors") {
    CHECK(contains(usage_error({"--lr", "%value%"}), "('%25value%25') for option '--lr'"));
    CHECK(contains(usage_error({"--batch-%original_token%size", "1"}), "%25original_token%25"));
    CHECK(contains(usage_error({"--%canonical_option%"}), "%25canonical_option%25"));
    CHECK(contains(usage_error({"--lr", "5%"}), "('5%')"));  // one '%' cannot loop: unchanged
    {
      const ScopedEnv lr("MNIST_DDP_LR", "%value%");
      CHECK(contains(usage_error({}), "%25value%25"));
    }
    TempDir dir;
    const std::string path = dir.file("placeholders.cfg");
    const std::string text = "%option% = 1\n";
    write_file(path, Bytes(text.begin(), text.end()));
    CHECK(contains(usage_error({"--config", path.c_str()}), "%25option%25"));
  }

  // A mistyped "--epochs 3 7" must not train with 3 epochs and say nothing.
  TEST_CASE("stray positional arguments are usage errors") {
    CHECK_THROWS_AS(parse({"--epochs", "3", "7"}), UsageError);
    CHECK_THROWS_AS(parse({"cnn"}), UsageError);
  }

  TEST_CASE("each validation rule names the option and the value") {
    struct Rule {
      std::vector<const char*> args;
      const char* option;
      const char* got;
    };
    const std::vector<Rule> rules = {
        {{"--batch-size", "0"}, "--batch-size", "(got 0)"},
        {{"--test-batch-size", "0"}, "--test-batch-size", "(got 0)"},
        {{"--epochs", "0"}, "--epochs", "(got 0)"},
        {{"--lr", "0"}, "--lr", "(got 0)"},
        {{"--lr=-0.5"}, "--lr", "(got -0.5)"},
        {{"--momentum", "1"}, "--momentum", "(got 1)"},
        {{"--weight-decay=-1"}, "--weight-decay", "(got -1)"},
        {{"--model", "resnet"}, "--model must be one of linear, mlp, cnn, fastcnn", "(got resnet)"},
        {{"--optimizer", "rmsprop"}, "--optimizer", "(got rmsprop)"},
        {{"--seed=-1"}, "--seed", "(got -1)"},
        {{"--max-steps=-1"}, "--max-steps", "(got -1)"},
        {{"--threads=-1"}, "--threads", "(got -1)"},
        {{"--normalize-std", "0"}, "--normalize-std", "(got 0)"},
        {{"--min-accuracy", "1.5"}, "--min-accuracy", "(got 1.5)"},
        {{"--optimizer", "adam", "--momentum", "0.9"}, "--momentum", "(got 0.9)"},
        {{"--lr", "nan"}, "--lr must be a finite number", "(got nan)"},
        {{"--target-accuracy", "1.5"}, "--target-accuracy", "(got 1.5)"},
        {{"--optimizer", "adam", "--adam-beta1", "1"}, "--adam-beta1", "(got 1)"},
        {{"--optimizer", "adam", "--adam-beta2=-0.1"}, "--adam-beta2", "(got -0.1)"},
        {{"--adam-beta1", "0.7"},
         "--adam-beta1 must be left alone with --optimizer sgd",
         "(got 0.7)"},
        {{"--adam-beta2", "0.9"},
         "--adam-beta2 must be left alone with --optimizer sgd",
         "(got 0.9)"},
        {{"--lr-schedule", "step"}, "--lr-schedule", "(got step)"},
        {{"--warmup-steps=-1"}, "--warmup-steps", "(got -1)"},
        {{"--lr-schedule", "onecycle", "--warmup-steps", "10"}, "--warmup-steps", "(got 10)"},
        {{"--eval-every=-1"}, "--eval-every", "(got -1)"},
        {{"--bucket-mb", "0"}, "--bucket-mb", "(got 0)"},
        {{"--bucket-mb", "inf"}, "--bucket-mb must be a finite number", "(got inf)"},
        {{"--grad-accum", "0"}, "--grad-accum", "(got 0)"},
        {{"--grad-dtype", "int8"}, "--grad-dtype", "(got int8)"},
        {{"--comm-timeout", "0"}, "--comm-timeout", "(got 0)"},
        {{"--log-every=-1"}, "--log-every", "(got -1)"},
        {{"--progress", "fancy"}, "--progress", "(got fancy)"},
        {{"--device", "tpu"}, "--device", "(got tpu)"},
        {{"--backend", "gloo"}, "--backend", "(got gloo)"},
        {{"--mode", "fsdp"}, "--mode", "(got fsdp)"},
        {{"--precision", "fp8"}, "--precision", "(got fp8)"},
        {{"--cuda-graph", "yes"}, "--cuda-graph", "(got yes)"},
        {{"--device", "cpu", "--backend", "nccl"}, "--backend", "(got nccl)"},
        {{"--device", "cpu", "--mode", "dp"}, "--mode", "(got dp)"},
        {{"--mode", "dp", "--backend", "nccl"}, "--backend", "(got nccl)"},
        {{"--mode", "dp", "--communicate-alone"}, "--communicate-alone", "(got true)"},
        {{"--timeline-steps", "0:5"}, "--timeline-steps", "(got '0:5')"},
        {{"--timeline-steps", "9:5"}, "--timeline-steps", "(got '9:5')"},
        {{"--timeline-steps", "5"}, "--timeline-steps", "(got '5')"},
        {{"--timeline-steps", "5:"}, "--timeline-steps", "(got '5:')"},
        {{"--timeline-steps", "1:2:3"}, "--timeline-steps", "(got '1:2:3')"},
        {{"--timeline-steps", "a:b"}, "--timeline-steps", "(got 'a:b')"},
        {{"--global-batch-size=-1"}, "--global-batch-size", "(got -1)"},
        {{"--global-batch-size", "256", "--batch-size", "32"}, "--batch-size", "(got 32)"},
        // Options that size memory are bounded far above any real run.
        {{"--batch-size", "1048577"}, "--batch-size must be at most 1048576", "(got 1048577)"},
        {{"--batch-size", "2147483647"},
         "--batch-size must be at most 1048576",
         "(got 2147483647)"},
        {{"--test-batch-size", "1048577"}, "--test-batch-size must be at most 1048576", "(got "},
        {{"--global-batch-size", "1048577"},
         "--global-batch-size must be at most 1048576",
         "(got "},
        {{"--threads", "1025"}, "--threads must be at most 1024", "(got 1025)"},
        {{"--bucket-mb", "4097"}, "--bucket-mb must be at most 4096", "(got 4097)"},
        {{"--bucket-mb", "1e300"}, "--bucket-mb must be at most 4096", "(got 1e+300)"},
    };
    for (const Rule& rule : rules) {
      const std::string message = usage_error(rule.args);
      INFO("message: ", message);
      CHECK(contains(message, rule.option));
      CHECK(contains(message, rule.got));
    }
    CHECK(contains(usage_error({"--optimizer", "adam", "--momentum", "0.9"}), "adam"));
  }

  TEST_CASE("the bounds themselves are accepted, and --help states them") {
    const TrainConfig config = parse({"--batch-size", "1048576", "--test-batch-size", "1048576",
                                      "--threads", "1024", "--bucket-mb", "4096"})
                                   .config;
    CHECK(config.batch_size == 1048576);
    CHECK(config.test_batch_size == 1048576);
    CHECK(config.threads == 1024);
    CHECK(config.bucket_mb == 4096);
    CHECK(parse({"--global-batch-size", "1048576"}).config.global_batch_size == 1048576);
    const std::string help = config::help_text();
    CHECK(contains(help, "at most 1048576"));
    CHECK(contains(help, "at most 1024"));
    CHECK(contains(help, "at most 4096"));
  }

  // Ranks compare options as this text (check_same_options): it must hold the exact value.
  TEST_CASE("floating-point options show their exact value, as briefly as it round-trips") {
    CHECK(shown(parse({"--lr", "0.01000001"}).config).at("lr") == "0.01000001");
    CHECK(shown(parse({"--weight-decay", "0.0005"}).config).at("weight-decay") == "0.0005");
    CHECK(shown(parse({"--lr", "0.1"}).config).at("lr") == "0.1");
    CHECK(shown(parse({"--lr", "0.1234567890123"}).config).at("lr") == "0.1234567890123");
    CHECK(shown(parse({"--bucket-mb", "1e-300"}).config).at("bucket-mb") == "1e-300");
    CHECK(shown(parse({"--comm-timeout", "2.5"}).config).at("comm-timeout") == "2.5 s");
  }

  TEST_CASE("MNIST_DDP_* variables that name no option are warned about, with the closest one") {
    const ScopedEnv typo("MNIST_DDP_EPOCH", "3");
    const ScopedEnv lower("MNIST_DDP_batch_sise", "3");
    const ScopedEnv config_file("MNIST_DDP_CONFIG", "run.cfg");
    const ScopedEnv option("MNIST_DDP_EPOCHS", "2");
    // Variables of the program and the project's scripts that are no option: never warned about.
    const ScopedEnv fault("MNIST_DDP_FAULT", "rank=1,kind=exit,step=3");
    const ScopedEnv requeues("MNIST_DDP_MAX_REQUEUES", "3");
    const ScopedEnv offline("MNIST_DDP_OFFLINE", "1");
    const std::vector<std::string> warnings = config::environment_warnings();
    const auto count = [&](const std::string& start) {
      return std::count_if(warnings.begin(), warnings.end(), [&](const std::string& warning) {
        return warning.rfind(start, 0) == 0;
      });
    };
    CHECK(count("MNIST_DDP_EPOCH names no option; did you mean MNIST_DDP_EPOCHS (--epochs)?") == 1);
    CHECK(count("MNIST_DDP_batch_sise names no option; did you mean MNIST_DDP_BATCH_SIZE "
                "(--batch-size)?") == 1);
    CHECK(count("MNIST_DDP_CONFIG is not read: --config is given on the command line only") == 1);
    CHECK(count("MNIST_DDP_EPOCHS ") == 0);
    CHECK(count("MNIST_DDP_FAULT ") == 0);
    CHECK(count("MNIST_DDP_MAX_REQUEUES ") == 0);
    CHECK(count("MNIST_DDP_OFFLINE ") == 0);
    CHECK(parse({}).config.epochs == 2);  // the warnings change nothing
  }

  TEST_CASE("--global-batch-size splits evenly over the ranks, or says it cannot") {
    const TrainConfig config = parse({"--global-batch-size", "256"}).config;
    CHECK(config::split_global_batch(config, 1).batch_size == 256);
    CHECK(config::split_global_batch(config, 2).batch_size == 128);
    CHECK(config::split_global_batch(config, 4).batch_size == 64);
    CHECK(error_message<UsageError>([&] { config::split_global_batch(config, 3); }) ==
          "--global-batch-size 256 does not split evenly over 3 ranks: give a multiple of 3, or "
          "--batch-size per rank");
    const TrainConfig per_rank = parse({"--batch-size", "32"}).config;
    CHECK(config::split_global_batch(per_rank, 4).batch_size == 32);  // untouched without it
  }

  TEST_CASE("a resume path needs no --checkpoint-dir; auto and --eval-only work with one") {
    const config::Resume path = parse({"--resume", "run/ckpt-step-000000001.json"}).config.resume;
    CHECK(path.from == config::ResumeFrom::kPath);
    CHECK(path.path == "run/ckpt-step-000000001.json");
    const TrainConfig config =
        parse({"--checkpoint-dir", "ckpt", "--resume", "auto", "--eval-only"}).config;
    CHECK(config.eval_only);
    CHECK(config.resume.from == config::ResumeFrom::kAuto);
  }

  TEST_CASE("each checkpoint validation rule names the option") {
    struct Rule {
      std::vector<const char*> args;
      std::vector<const char*> parts;  // all of these must appear in the message
    };
    const std::vector<Rule> rules = {
        {{"--keep-last", "0"}, {"--keep-last", "at least 1", "(got 0)"}},
        {{"--keep-last=-2"}, {"--keep-last", "(got -2)"}},
        {{"--checkpoint-every=-1"}, {"--checkpoint-every", "at least 0", "(got -1)"}},
        {{"--resume", "auto"}, {"--resume", "--checkpoint-dir", "(got auto)"}},
        {{"--eval-only"}, {"--resume", "--eval-only", "(got never)"}},
        {{"--eval-only", "--resume", "never", "--checkpoint-dir", "ckpt"},
         {"--resume", "--eval-only", "(got never)"}},
    };
    for (const Rule& rule : rules) {
      const std::string message = usage_error(rule.args);
      INFO("message: ", message);
      for (const char* part : rule.parts) {
        CAPTURE(part);
        CHECK(contains(message, part));
      }
    }
  }

  TEST_CASE("validate applies the checkpoint rules to a TrainConfig directly") {
    TrainConfig config;
    config.keep_last = 0;
    CHECK(contains(error_message<UsageError>([&] { config::validate(config); }), "--keep-last"));
    config = TrainConfig{};
    config.checkpoint_every = -1;
    CHECK(contains(error_message<UsageError>([&] { config::validate(config); }),
                   "--checkpoint-every"));
    config = TrainConfig{};
    config.resume.from = config::ResumeFrom::kAuto;
    CHECK(contains(error_message<UsageError>([&] { config::validate(config); }), "--resume"));
    config.checkpoint_dir = "ckpt";
    CHECK_NOTHROW(config::validate(config));
  }

  TEST_CASE("ranks compare every option but --data-dir") {
    Shown agreed = kDocumentedDefaults;
    agreed.erase("data-dir");
    CHECK(shown(TrainConfig{}, config::Scope::kJob) == agreed);
  }

  TEST_CASE("an entry added to the option table is an option everywhere") {
    config::OptionTable options = config::train_options();
    options.back().second.push_back(config::option("seed-copy", &TrainConfig::seed,
                                                   config::Scope::kTraining, {config::at_most(99)},
                                                   "a second name for --seed"));
    const std::string help = config::help_text(options);
    CHECK(contains(help, "  --seed-copy arg (=1)"));
    CHECK(contains(help, "a second name for --seed"));
    CHECK_FALSE(contains(config::help_text(), "--seed-copy"));

    const TrainConfig config = parse({"--seed-copy", "7"}, options).config;
    CHECK(config.seed == 7);
    CHECK(shown(config, config::Scope::kJob, options).at("seed-copy") == "7");
    const nlohmann::json shape = checkpoint::training_shape(config, 100, options);
    CHECK(shape.at("seed_copy") == 7);
    CHECK_FALSE(checkpoint::training_shape(config, 100).contains("seed_copy"));
    CHECK(error_message<UsageError>([&] {
            parse({"--seed-copy", "100"}, options);
          }) == "--seed-copy must be at most 99 (got 100)");
    {
      const ScopedEnv variable("MNIST_DDP_SEED_COPY", "8");
      CHECK(parse({}, options).config.seed == 8);
      const auto named = [](const std::vector<std::string>& warnings) {
        return std::count_if(warnings.begin(), warnings.end(), [](const std::string& warning) {
          return contains(warning, "MNIST_DDP_SEED_COPY");
        });
      };
      CHECK(named(config::environment_warnings(options)) == 0);
      CHECK(named(config::environment_warnings()) == 1);
    }
    TempDir dir;
    const std::string path = dir.file("copy.cfg");
    const std::string text = "seed-copy = 9\n";
    write_file(path, Bytes(text.begin(), text.end()));
    CHECK(parse({"--config", path.c_str()}, options).config.seed == 9);
  }
}

}  // namespace mnist_ddp::testing
