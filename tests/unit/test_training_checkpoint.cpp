// tests/unit/test_training_checkpoint.cpp — the checks a checkpoint passes before it is restored:
// the header's fields (read_checkpoint_meta), the options that shape training
// (shape_differences), and the tensors' names and shapes (restore_checkpoint, restore_model).
// Each failure is a CheckpointError that names what is wrong, and a passing checkpoint restores
// the parameters bit for bit.
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "checkpoint/checkpoint_meta.hpp"
#include "checkpoint/training_checkpoint.hpp"
#include "common/error.hpp"
#include "config/train_config.hpp"
#include "model/classifier.hpp"
#include "support/idx_writer.hpp"
#include "train/make_optimizer.hpp"

namespace mnist_ddp::testing {
namespace {

using checkpoint::CheckpointContents;

/// The message of the CheckpointError that `action` throws.
template <typename F>
std::string checkpoint_error(F&& action) {
  return error_message<CheckpointError>(std::forward<F>(action));
}

/// A linear model with its optimizer, and the checkpoint of it at step 5 written by 2 ranks.
struct Run {
  config::TrainConfig config;
  std::shared_ptr<model::Classifier> model = model::make_model("linear");
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      train::make_optimizer(config, model->parameters());

  CheckpointContents checkpoint() {
    // Epoch 1, step 5, position 640, loss sum 2.5 over 10 losses, 640 images.
    const checkpoint::TrainProgress progress{1, 5, 640, 2.5, 10, 640};
    return checkpoint::make_checkpoint(config, /*train_size=*/1000, /*world_size=*/2, progress,
                                       *model, *optimizer, at::zeros({2, 8}, at::kByte));
  }
  checkpoint::RestoredRun restore(const CheckpointContents& contents) {
    return checkpoint::restore_checkpoint(contents, config, /*train_size=*/1000, *model,
                                          *optimizer);
  }
};

TEST_CASE("a checkpoint restores into a fresh run of the same shape, bit for bit") {
  Run writer;
  const CheckpointContents contents = writer.checkpoint();
  Run reader;
  const checkpoint::RestoredRun run = reader.restore(contents);
  CHECK(run.world_size == 2);
  CHECK(run.progress.step == 5);
  CHECK(run.progress.position == 640);
  CHECK(run.progress.loss_sum == 2.5);
  CHECK(run.rng_states.sizes().vec() == std::vector<std::int64_t>{2, 8});
  const auto written = writer.model->named_parameters();
  const auto read = reader.model->named_parameters();
  for (std::size_t i = 0; i < written.size(); ++i) {
    CHECK(same_bits(written[i].value(), read[i].value()));
  }
}

TEST_CASE("shape_differences lists every option that differs, by its option name") {
  const nlohmann::json saved = {{"model", "cnn"}, {"lr", 0.01}, {"batch_size", 64}};
  CHECK(checkpoint::shape_differences(saved, saved).empty());
  const nlohmann::json current = {
      {"model", "linear"}, {"lr", 0.01}, {"batch_size", 32}, {"train_images", 100}};
  CHECK(checkpoint::shape_differences(saved, current) ==
        "--batch-size: checkpoint 64, this run 32; --model: checkpoint \"cnn\", this run "
        "\"linear\"; training images: checkpoint none, this run 100");
}

TEST_CASE("a checkpoint of another run's options is refused, naming the options") {
  Run writer;
  const CheckpointContents contents = writer.checkpoint();
  Run reader;
  reader.config.lr = 0.5;
  reader.config.batch_size = 32;
  const std::string message = checkpoint_error([&] { reader.restore(contents); });
  CHECK(contains(message, "belongs to another run"));
  CHECK(contains(message, "--lr: checkpoint 0.01, this run 0.5"));
  CHECK(contains(message, "--batch-size: checkpoint 64, this run 32"));
}

TEST_CASE("a tensor of the wrong shape or a missing tensor is named") {
  Run writer;
  CheckpointContents contents = writer.checkpoint();
  REQUIRE(contents.tensors.front().first == "model/fc.weight");
  SUBCASE("wrong shape") {
    contents.tensors.front().second = at::zeros({10, 5});
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "'model/fc.weight' has shape [10, 5] in the checkpoint, [10, 784] in the model");
    CHECK(checkpoint_error([&] {
            auto model = model::make_model("linear");
            checkpoint::restore_model(contents, "linear", *model);
          }) == "'model/fc.weight' has shape [10, 5] in the checkpoint, [10, 784] in the model");
  }
  SUBCASE("missing") {
    contents.tensors.erase(contents.tensors.begin());
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "the checkpoint lacks 'model/fc.weight'");
  }
  SUBCASE("RNG states that do not have a row for each rank") {
    contents.tensors.back().second = at::zeros({3, 8}, at::kByte);
    CHECK(contains(checkpoint_error([&] { Run().restore(contents); }),
                   "RNG states have shape [3, 8]"));
  }
}

TEST_CASE("read_checkpoint_meta names the field that is missing, mistyped or out of range") {
  Run writer;
  const nlohmann::json good = writer.checkpoint().meta;
  CHECK(checkpoint::read_checkpoint_meta(good).progress.images == 640);

  struct Case {
    const char* pointer;  // JSON pointer of the field to change
    nlohmann::json value;
    const char* expected;
  };
  const Case cases[] = {
      {"/format", "something else", "not an mnist_ddp training checkpoint"},
      {"/world_size", 0, "'world_size' = 0, not an integer from 1"},
      {"/world_size", 3000000000LL, "'world_size' = 3000000000, not an integer"},
      {"/progress/step", "12", "'progress.step' = \"12\", not an integer from 0"},
      {"/progress/epoch", -1, "'progress.epoch' = -1"},
      {"/progress/position", 1.5, "'progress.position' = 1.5"},
      {"/progress/loss_sum", "x", "'progress.loss_sum' = \"x\", not a number"},
      {"/progress", 7, "the checkpoint's header lacks 'progress.epoch'"},
      {"/training", nlohmann::json::array(), "'training' = [], not an object"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pointer);
    nlohmann::json meta = good;
    meta[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const std::string message = checkpoint_error([&] { checkpoint::read_checkpoint_meta(meta); });
    CHECK(contains(message, c.expected));
  }
  nlohmann::json without_step = good;
  without_step["progress"].erase("step");
  CHECK(checkpoint_error([&] { checkpoint::read_checkpoint_meta(without_step); }) ==
        "the checkpoint's header lacks 'progress.step'");
}

}  // namespace
}  // namespace mnist_ddp::testing
