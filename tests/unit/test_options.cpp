// tests/unit/test_options.cpp — parse_command: defaults, every option, the precedence of command
// line over MNIST_DDP_* variables over the --config file, and every validation rule.
#include <cstdlib>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "common/error.hpp"
#include "config/options.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using config::Action;
using config::Command;
using config::parse_command;
using config::TrainConfig;

/// Parses `args` as if given after the program name.
Command parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mnist_ddp");
  return parse_command(static_cast<int>(args.size()), args.data());
}

/// The UsageError message for `args`.
std::string usage_error(const std::vector<const char*>& args) {
  return error_message<UsageError>([&] { parse(args); });
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

/// Checks every field of `got` against `want`.
void check_same(const TrainConfig& got, const TrainConfig& want) {
  CHECK(got.data_dir == want.data_dir);
  CHECK(got.normalize_mean == want.normalize_mean);
  CHECK(got.normalize_std == want.normalize_std);
  CHECK(got.drop_last == want.drop_last);
  CHECK(got.model == want.model);
  CHECK(got.epochs == want.epochs);
  CHECK(got.batch_size == want.batch_size);
  CHECK(got.test_batch_size == want.test_batch_size);
  CHECK(got.optimizer == want.optimizer);
  CHECK(got.lr == want.lr);
  CHECK(got.momentum == want.momentum);
  CHECK(got.weight_decay == want.weight_decay);
  CHECK(got.seed == want.seed);
  CHECK(got.max_steps == want.max_steps);
  CHECK(got.threads == want.threads);
  CHECK(got.metrics_file == want.metrics_file);
  CHECK(got.log_all_ranks == want.log_all_ranks);
  CHECK(got.min_accuracy == want.min_accuracy);
}

}  // namespace

TEST_SUITE("parse_command") {
  TEST_CASE("no arguments give the defaults of TrainConfig") {
    const Command command = parse({});
    CHECK(command.action == Action::kTrain);
    check_same(command.config, TrainConfig{});
  }

  TEST_CASE("every option is read from the command line") {
    const Command command = parse({"--data-dir",
                                   "/data/x",
                                   "--normalize-mean",
                                   "0.5",
                                   "--normalize-std",
                                   "0.25",
                                   "--drop-last",
                                   "--model",
                                   "cnn",
                                   "--epochs",
                                   "3",
                                   "--batch-size",
                                   "128",
                                   "--test-batch-size",
                                   "500",
                                   "--optimizer",
                                   "adam",
                                   "--lr",
                                   "0.001",
                                   "--weight-decay",
                                   "0.0005",
                                   "--seed",
                                   "42",
                                   "--max-steps",
                                   "100",
                                   "--threads",
                                   "2",
                                   "--metrics-file",
                                   "m.jsonl",
                                   "--log-all-ranks",
                                   "--min-accuracy",
                                   "0.9"});
    TrainConfig want;
    want.data_dir = "/data/x";
    want.normalize_mean = 0.5;
    want.normalize_std = 0.25;
    want.drop_last = true;
    want.model = "cnn";
    want.epochs = 3;
    want.batch_size = 128;
    want.test_batch_size = 500;
    want.optimizer = "adam";
    want.lr = 0.001;
    want.weight_decay = 0.0005;
    want.seed = 42;
    want.max_steps = 100;
    want.threads = 2;
    want.metrics_file = "m.jsonl";
    want.log_all_ranks = true;
    want.min_accuracy = 0.9;
    check_same(command.config, want);
    // Momentum cannot join the list above: it is refused with adam.
    CHECK(parse({"--momentum", "0.9"}).config.momentum == 0.9);
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
    CHECK(config.model == "mlp");    // file only
    CHECK(config.epochs == 7);       // file only
    CHECK(config.batch_size == 16);  // environment over file
    CHECK(config.lr == 0.3);         // command line over environment and file
  }

  TEST_CASE("unknown options, bad config files and non-numbers are usage errors") {
    CHECK(contains(usage_error({"--bogus", "1"}), "--bogus"));
    CHECK(contains(usage_error({"--epochs", "three"}), "--epochs"));
    CHECK(contains(usage_error({"--epochs", "three"}), "three"));

    TempDir dir;
    const std::string missing = dir.file("absent.cfg");
    CHECK(contains(usage_error({"--config", missing.c_str()}),
                   "cannot open --config file '" + missing + "'"));

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
  // error placeholders] in lib/config/option_error.hpp).
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
        {{"--model", "resnet"}, "--model", "(got resnet)"},
        {{"--optimizer", "rmsprop"}, "--optimizer", "(got rmsprop)"},
        {{"--seed=-1"}, "--seed", "(got -1)"},
        {{"--max-steps=-1"}, "--max-steps", "(got -1)"},
        {{"--threads=-1"}, "--threads", "(got -1)"},
        {{"--normalize-std", "0"}, "--normalize-std", "(got 0)"},
        {{"--min-accuracy", "1.5"}, "--min-accuracy", "(got 1.5)"},
        {{"--optimizer", "adam", "--momentum", "0.9"}, "--momentum", "(got 0.9)"},
    };
    for (const Rule& rule : rules) {
      const std::string message = usage_error(rule.args);
      INFO("message: ", message);
      CHECK(contains(message, rule.option));
      CHECK(contains(message, rule.got));
    }
    CHECK(contains(usage_error({"--optimizer", "adam", "--momentum", "0.9"}), "adam"));
  }

  TEST_CASE("help_text mentions every long option") {
    const std::string help = config::help_text();
    for (const char* option : {"--help",         "--version",         "--config",
                               "--data-dir",     "--normalize-mean",  "--normalize-std",
                               "--drop-last",    "--model",           "--epochs",
                               "--batch-size",   "--test-batch-size", "--optimizer",
                               "--lr",           "--momentum",        "--weight-decay",
                               "--seed",         "--max-steps",       "--threads",
                               "--metrics-file", "--log-all-ranks",   "--min-accuracy"}) {
      CAPTURE(option);
      CHECK(contains(help, option));
    }
  }
}

namespace {

/// Checks the checkpoint fields of `got` against `want`.
void check_same_checkpointing(const TrainConfig& got, const TrainConfig& want) {
  CHECK(got.checkpoint_dir == want.checkpoint_dir);
  CHECK(got.checkpoint_every == want.checkpoint_every);
  CHECK(got.keep_last == want.keep_last);
  CHECK(got.resume == want.resume);
  CHECK(got.eval_only == want.eval_only);
  CHECK(got.export_model == want.export_model);
}

}  // namespace

TEST_SUITE("parse_command") {
  TEST_CASE("the checkpoint options default to no checkpoints, keep 3, resume never") {
    const TrainConfig config = parse({}).config;
    check_same_checkpointing(config, TrainConfig{});
    CHECK(config.checkpoint_dir.empty());
    CHECK(config.checkpoint_every == 0);
    CHECK(config.keep_last == 3);
    CHECK(config.resume == "never");
    CHECK_FALSE(config.eval_only);
    CHECK(config.export_model.empty());
  }

  TEST_CASE("every checkpoint option is read from the command line") {
    const Command command =
        parse({"--checkpoint-dir", "/scratch/ckpt", "--checkpoint-every", "50", "--keep-last", "5",
               "--resume", "auto", "--export-model", "model.pt"});
    TrainConfig want;
    want.checkpoint_dir = "/scratch/ckpt";
    want.checkpoint_every = 50;
    want.keep_last = 5;
    want.resume = "auto";
    want.export_model = "model.pt";
    check_same_checkpointing(command.config, want);

    // --eval-only needs a checkpoint, so it cannot join the list above with "auto" alone.
    const TrainConfig eval =
        parse({"--eval-only", "--resume", "/scratch/ckpt/ckpt-step-000000100.mddp"}).config;
    CHECK(eval.eval_only);
    CHECK(eval.resume == "/scratch/ckpt/ckpt-step-000000100.mddp");
    CHECK(parse({"--eval-only=false"}).config.eval_only == false);
  }

  TEST_CASE("checkpoint options come from MNIST_DDP_* variables and --config files too") {
    TempDir dir;
    const std::string path = dir.file("run.cfg");
    const std::string text = "checkpoint-dir = /from/file\nkeep-last = 7\nresume = auto\n";
    write_file(path, Bytes(text.begin(), text.end()));
    ScopedEnv every("MNIST_DDP_CHECKPOINT_EVERY", "25");
    ScopedEnv keep("MNIST_DDP_KEEP_LAST", "4");
    const TrainConfig config = parse({"--config", path.c_str()}).config;
    CHECK(config.checkpoint_dir == "/from/file");
    CHECK(config.checkpoint_every == 25);
    CHECK(config.keep_last == 4);  // environment over file
    CHECK(config.resume == "auto");
  }

  TEST_CASE("a resume path needs no --checkpoint-dir; auto and --eval-only work with one") {
    CHECK(parse({"--resume", "run/ckpt-step-000000001.json"}).config.resume ==
          "run/ckpt-step-000000001.json");
    const TrainConfig config =
        parse({"--checkpoint-dir", "ckpt", "--resume", "auto", "--eval-only"}).config;
    CHECK(config.eval_only);
    CHECK(config.resume == "auto");
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
    config.resume = "auto";
    CHECK(contains(error_message<UsageError>([&] { config::validate(config); }), "--resume"));
    config.checkpoint_dir = "ckpt";
    CHECK_NOTHROW(config::validate(config));
  }

  TEST_CASE("help_text mentions every checkpoint option") {
    const std::string help = config::help_text();
    for (const char* option : {"--checkpoint-dir", "--checkpoint-every", "--keep-last", "--resume",
                               "--eval-only", "--export-model"}) {
      CAPTURE(option);
      CHECK(contains(help, option));
    }
  }
}

}  // namespace mnist_ddp::testing
