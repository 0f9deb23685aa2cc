// tests/unit/test_training_checkpoint.cpp — the checks a checkpoint passes before it is restored:
// the header's fields (read_checkpoint_meta), the options that shape training
// (shape_differences), and the tensors' names, shapes and types, the Adam step, the RNG states
// (restore_checkpoint, restore_model). Each failure is a CheckpointError that names what is
// wrong and leaves model and optimizer untouched; a passing checkpoint restores the parameters
// bit for bit.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include "checkpoint/checkpoint_meta.hpp"
#include "checkpoint/optimizer_state.hpp"
#include "checkpoint/training_checkpoint.hpp"
#include "common/error.hpp"
#include "config/train_config.hpp"
#include "model/classifier.hpp"
#include "support/idx_writer.hpp"
#include "train/device_optimizer.hpp"

namespace mnist_ddp::testing {
namespace {

using checkpoint::CheckpointContents;
using config::Optimizer;

constexpr Optimizer kOptimizers[] = {Optimizer::kSgd, Optimizer::kAdam};

/// The message of the CheckpointError that `action` throws.
template <typename F>
std::string checkpoint_error(F&& action) {
  return error_message<CheckpointError>(std::forward<F>(action));
}

/// `contents` with its header read, as a resume hands it on.
checkpoint::LoadedCheckpoint loaded(const CheckpointContents& contents) {
  return {checkpoint::read_checkpoint_meta(contents.meta), contents};
}

/// `ranks` CPU generator states, as the trainer gathers them: (ranks, state bytes), uint8.
at::Tensor rng_states(int ranks) {
  std::vector<at::Tensor> rows;
  for (int rank = 0; rank < ranks; ++rank) {
    rows.push_back(at::detail::createCPUGenerator(/*seed_val=*/rank + 1).get_state());
  }
  return at::stack(rows);
}

/// The config of a run with Adam, or SGD with momentum: optimizers that keep state.
config::TrainConfig with_optimizer(Optimizer optimizer) {
  config::TrainConfig config;
  config.optimizer = optimizer;
  if (optimizer == Optimizer::kSgd) config.momentum = 0.9;
  return config;
}

/// A linear model with its optimizer, and the checkpoint of it at step 5 written by 2 ranks.
struct Run {
  Run() = default;
  explicit Run(config::TrainConfig c) : config(std::move(c)) {}

  config::TrainConfig config;
  std::shared_ptr<model::Classifier> model = model::make_model(config::Model::kLinear);
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      train::make_optimizer(config, model->parameters());
  at::Tensor cuda_rng_states;  // a run on the CPU has none

  /// One optimizer step on random images, so the optimizer has state (momentum, moments).
  void take_a_step() {
    optimizer->zero_grad();
    model->forward(at::rand({4, 1, 28, 28})).logsumexp(1).sum().backward();
    optimizer->step();
  }
  CheckpointContents checkpoint() {
    // Epoch 1, step 5, position 640, loss sum 2.5 over 10 losses, 640 images.
    const checkpoint::TrainProgress progress{1, 5, 640, 2.5, 10, 640};
    return checkpoint::make_checkpoint(config, /*train_size=*/1000, /*world_size=*/2, progress,
                                       *model, *optimizer, rng_states(2), cuda_rng_states);
  }
  checkpoint::RestoredRun restore(const CheckpointContents& contents) {
    return checkpoint::restore_checkpoint(loaded(contents), config, /*train_size=*/1000, *model,
                                          *optimizer);
  }
};

/// The tensor `name` of `contents`; fails the test when there is none.
at::Tensor& tensor_named(CheckpointContents& contents, const std::string& name) {
  for (auto& [entry, tensor] : contents.tensors) {
    if (entry == name) return tensor;
  }
  FAIL("the checkpoint has no tensor '" << name << "'");
  throw std::logic_error("unreachable");
}

/// `contents` without its tensor `name`.
void erase_named(CheckpointContents& contents, const std::string& name) {
  tensor_named(contents, name);  // present before
  auto& tensors = contents.tensors;
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                               [&](const auto& entry) { return entry.first == name; }),
                tensors.end());
}

/// Copies of every parameter and every optimizer state tensor of `run`, to show it unchanged.
std::vector<at::Tensor> snapshot(Run& run) {
  std::vector<at::Tensor> copies;
  for (const auto& p : run.model->parameters()) copies.push_back(p.detach().clone());
  for (auto& [name, tensor] :
       checkpoint::optimizer_state_tensors(*run.optimizer, run.model->parameters())) {
    copies.push_back(tensor.clone());
  }
  return copies;
}

bool same_snapshots(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_bits(a[i], b[i])) return false;
  }
  return true;
}

TEST_CASE("a checkpoint restores into a fresh run of the same shape, bit for bit") {
  Run writer;
  const CheckpointContents contents = writer.checkpoint();
  Run reader;
  const checkpoint::RestoredRun run = reader.restore(contents);
  const checkpoint::CheckpointMeta meta = loaded(contents).meta;
  CHECK(meta.world_size == 2);
  CHECK(meta.progress.step == 5);
  CHECK(meta.progress.position == 640);
  CHECK(meta.progress.loss_sum == 2.5);
  CHECK(same_bits(run.rng_states, rng_states(2)));
  const auto written = writer.model->named_parameters();
  const auto read = reader.model->named_parameters();
  for (std::size_t i = 0; i < written.size(); ++i) {
    CHECK(same_bits(written[i].value(), read[i].value()));
  }
}

TEST_CASE("the training shape holds the options that shape training, as it always has") {
  CHECK(checkpoint::training_shape(config::TrainConfig{}, 60000).dump() ==
        R"({"adam_beta1":0.9,"adam_beta2":0.999,"batch_size":64,"drop_last":false,)"
        R"("global_batch_size":0,"grad_accum":1,"grad_dtype":"fp32","lr":0.01,)"
        R"("lr_schedule":"constant","model":"linear","momentum":0.0,"normalize_mean":0.1307,)"
        R"("normalize_std":0.3081,"optimizer":"sgd","schedule_epochs":0,"seed":1,)"
        R"("train_images":60000,"warmup_steps":0,"weight_decay":0.0})");
  config::TrainConfig global;
  global.global_batch_size = 256;
  global.lr_schedule = config::Schedule::kCosine;
  const nlohmann::json shape = checkpoint::training_shape(global, 100);
  CHECK_FALSE(shape.contains("batch_size"));  // each rank's share follows from the world size
  CHECK(shape.at("schedule_epochs") == 5);
  CHECK(shape.at("lr_schedule") == "cosine");
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

TEST_CASE("the learning-rate schedule and Adam's betas are part of a run's options") {
  config::TrainConfig scheduled = with_optimizer(Optimizer::kAdam);
  scheduled.lr_schedule = config::Schedule::kOneCycle;
  scheduled.adam_beta1 = 0.7;
  Run writer(scheduled);
  const CheckpointContents contents = writer.checkpoint();
  CHECK_NOTHROW(Run(scheduled).restore(contents));
  const std::string message =
      checkpoint_error([&] { Run(with_optimizer(Optimizer::kAdam)).restore(contents); });
  CHECK(contains(message, "--lr-schedule: checkpoint \"onecycle\", this run \"constant\""));
  CHECK(contains(message, "--adam-beta1: checkpoint 0.7, this run 0.9"));
  // A schedule spans the steps of --epochs: another count would reshape it.
  scheduled.epochs = 9;
  CHECK(contains(checkpoint_error([&] { Run(scheduled).restore(contents); }),
                 "--epochs of the --lr-schedule: checkpoint 5, this run 9"));
}

TEST_CASE("a checkpoint written before the schedule options existed resumes a run without them") {
  Run writer;
  CheckpointContents contents = writer.checkpoint();
  for (const char* key :
       {"adam_beta1", "adam_beta2", "lr_schedule", "warmup_steps", "schedule_epochs"}) {
    REQUIRE(contents.meta["training"].erase(key) == 1);
  }
  CHECK_NOTHROW(Run().restore(contents));
  config::TrainConfig warm;
  warm.warmup_steps = 10;
  CHECK(contains(checkpoint_error([&] { Run(warm).restore(contents); }),
                 "--warmup-steps: checkpoint 0, this run 10"));
}

TEST_CASE("a checkpoint of a global batch holds no batch per rank, and says so") {
  config::TrainConfig global;
  global.global_batch_size = 128;
  const CheckpointContents contents = Run(global).checkpoint();
  CHECK_NOTHROW(Run(global).restore(contents));
  config::TrainConfig per_rank;
  per_rank.batch_size = 32;
  CHECK(contains(checkpoint_error([&] { Run(per_rank).restore(contents); }),
                 "--batch-size: checkpoint none, this run 32; --global-batch-size: checkpoint "
                 "128, this run 0"));
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
            auto model = model::make_model(config::Model::kLinear);
            checkpoint::restore_model(loaded(contents), config::Model::kLinear, *model);
          }) == "'model/fc.weight' has shape [10, 5] in the checkpoint, [10, 784] in the model");
  }
  SUBCASE("missing") {
    contents.tensors.erase(contents.tensors.begin());
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "the checkpoint lacks 'model/fc.weight'");
  }
  SUBCASE("no RNG states") {
    erase_named(contents, "rng_states");
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "the checkpoint lacks its RNG states 'rng_states'");
  }
  SUBCASE("RNG states that do not have a row for each rank") {
    contents.tensors.back().second = at::zeros({3, 8}, at::kByte);
    CHECK(contains(checkpoint_error([&] { Run().restore(contents); }),
                   "RNG states 'rng_states' have shape [3, 8]"));
  }
}

TEST_CASE("a tensor that the run does not have is refused, naming it") {
  for (const Optimizer optimizer : kOptimizers) {
    CAPTURE(config::to_string(optimizer));
    Run writer(with_optimizer(optimizer));
    for (const std::string& name :
         {std::string("model/extra"), std::string("buffer/extra"), std::string("extra"),
          std::string("optimizer/2/exp_avg"), std::string("optimizer/0/unknown")}) {
      CAPTURE(name);
      CheckpointContents contents = writer.checkpoint();
      contents.tensors.emplace_back(name, at::zeros({2}));
      const std::string refusal =
          "the checkpoint holds '" + name + "', which this run does not have";
      CHECK(checkpoint_error([&] { Run(with_optimizer(optimizer)).restore(contents); }) == refusal);
      if (name.rfind("model/", 0) == 0 || name.rfind("buffer/", 0) == 0) {
        CHECK(checkpoint_error([&] {
                auto model = model::make_model(config::Model::kLinear);
                checkpoint::restore_model(loaded(contents), config::Model::kLinear, *model);
              }) == refusal);
      }
    }
  }
}

TEST_CASE("a model tensor of another element type is refused, not converted") {
  Run writer;
  CheckpointContents contents = writer.checkpoint();
  tensor_named(contents, "model/fc.bias") = tensor_named(contents, "model/fc.bias").to(at::kDouble);
  const std::string expected = "'model/fc.bias' is float64 in the checkpoint, float32 in the model";
  CHECK(checkpoint_error([&] { Run().restore(contents); }) == expected);
  CHECK(checkpoint_error([&] {
          auto model = model::make_model(config::Model::kLinear);
          checkpoint::restore_model(loaded(contents), config::Model::kLinear, *model);
        }) == expected);
}

TEST_CASE("RNG states that the CPU generator would refuse are named") {
  Run writer;
  CheckpointContents contents = writer.checkpoint();
  at::Tensor& states = tensor_named(contents, "rng_states");
  const std::int64_t width = at::detail::getDefaultCPUGenerator().get_state().numel();
  REQUIRE(states.sizes().vec() == std::vector<std::int64_t>{2, width});
  SUBCASE("another element type") {
    states = states.to(at::kFloat);
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "the checkpoint's RNG states 'rng_states' are float32, not uint8");
  }
  SUBCASE("rows narrower than a generator state") {
    states = states.narrow(1, 0, 8).contiguous();
    CHECK(checkpoint_error([&] { Run().restore(contents); }) ==
          "the checkpoint's RNG states 'rng_states' have rows of 8 bytes, not the " +
              std::to_string(width) + " of a CPU generator state");
  }
  SUBCASE("a row of the right width that is no MT19937 state") {
    states[1].zero_();  // "seeded" false: LibTorch calls the state invalid
    CHECK(contains(checkpoint_error([&] { Run().restore(contents); }),
                   "the checkpoint's RNG state of rank 1 in 'rng_states' is not a CPU generator "
                   "state: "));
  }
}

TEST_CASE("restored RNG states are what the trainer hands to the generator") {
  Run writer;
  const CheckpointContents contents = writer.checkpoint();
  const checkpoint::RestoredRun run = Run().restore(contents);
  // Each a tensor of its own, not a row inside the checkpoint's (Note [A generator state is a
  // tensor of its own]).
  const at::Tensor state = checkpoint::generator_state(run.rng_states, 1);
  CHECK(state.storage_offset() == 0);
  CHECK(state.storage().nbytes() == static_cast<size_t>(state.numel()));
  at::Generator generator = at::detail::createCPUGenerator();
  generator.set_state(state);
  CHECK(same_bits(generator.get_state(), rng_states(2)[1]));
}

TEST_CASE("CUDA generator states travel with a GPU run's checkpoint, checked for their shape") {
  Run writer;
  CHECK_FALSE(Run().restore(writer.checkpoint()).cuda_rng_states.defined());
  // A CUDA generator's state is its seed and offset: 16 bytes in LibTorch 2.x.
  writer.cuda_rng_states = at::randint(0, 256, {2, 16}, at::kByte);
  const CheckpointContents contents = writer.checkpoint();
  CHECK(same_bits(Run().restore(contents).cuda_rng_states, writer.cuda_rng_states));
  SUBCASE("another element type") {
    writer.cuda_rng_states = writer.cuda_rng_states.to(at::kDouble);
    CHECK(checkpoint_error([&] { Run().restore(writer.checkpoint()); }) ==
          "the checkpoint's CUDA RNG states 'cuda_rng_states' are float64 of shape [2, 16], not a "
          "uint8 row for each of its 2 ranks");
  }
  SUBCASE("a row missing") {
    writer.cuda_rng_states = writer.cuda_rng_states.narrow(0, 0, 1).contiguous();
    CHECK(contains(checkpoint_error([&] { Run().restore(writer.checkpoint()); }),
                   "'cuda_rng_states' are uint8 of shape [1, 16], not a uint8 row for each of "
                   "its 2 ranks"));
  }
}

TEST_CASE("Adam state with a missing or malformed entry is named") {
  Run writer(with_optimizer(Optimizer::kAdam));
  writer.take_a_step();
  CheckpointContents contents = writer.checkpoint();
  REQUIRE(tensor_named(contents, "optimizer/0/step").item<std::int64_t>() == 1);
  Run reader(with_optimizer(Optimizer::kAdam));
  const auto restore = [&] { return checkpoint_error([&] { reader.restore(contents); }); };
  SUBCASE("a step of two elements") {
    tensor_named(contents, "optimizer/0/step") = at::ones({2}, at::kLong);
    CHECK(restore() ==
          "'optimizer/0/step' is int64 of shape [2] in the checkpoint, not an int64 scalar");
  }
  SUBCASE("a step of one element that is not a scalar") {
    tensor_named(contents, "optimizer/0/step") = at::ones({1}, at::kLong);
    CHECK(restore() ==
          "'optimizer/0/step' is int64 of shape [1] in the checkpoint, not an int64 scalar");
  }
  SUBCASE("a fractional step") {
    tensor_named(contents, "optimizer/1/step") = at::scalar_tensor(1.5, at::kDouble);
    CHECK(restore() ==
          "'optimizer/1/step' is float64 of shape [] in the checkpoint, not an int64 scalar");
  }
  SUBCASE("a step before the first") {
    tensor_named(contents, "optimizer/0/step") = at::scalar_tensor(-3, at::kLong);
    CHECK(restore() == "'optimizer/0/step' = -3 in the checkpoint, not a step count from 1");
  }
  SUBCASE("no step") {
    erase_named(contents, "optimizer/0/step");
    CHECK(restore() == "the checkpoint lacks 'optimizer/0/step'");
  }
  SUBCASE("no exp_avg_sq") {
    erase_named(contents, "optimizer/1/exp_avg_sq");
    CHECK(restore() == "the checkpoint lacks 'optimizer/1/exp_avg_sq'");
  }
  SUBCASE("no exp_avg, the rest there") {
    erase_named(contents, "optimizer/0/exp_avg");
    CHECK(restore() == "the checkpoint lacks 'optimizer/0/exp_avg'");
  }
  SUBCASE("moments of another element type") {
    at::Tensor& moments = tensor_named(contents, "optimizer/0/exp_avg_sq");
    moments = moments.to(at::kDouble);
    CHECK(restore() ==
          "'optimizer/0/exp_avg_sq' is float64 in the checkpoint, float32 in the model");
  }
  SUBCASE("moments of another shape") {
    tensor_named(contents, "optimizer/1/exp_avg") = at::zeros({3});
    CHECK(restore() == "'optimizer/1/exp_avg' has shape [3] in the checkpoint, [10] in the model");
  }
}

TEST_CASE("an SGD momentum buffer of another element type is named") {
  Run writer(with_optimizer(Optimizer::kSgd));
  writer.take_a_step();
  CheckpointContents contents = writer.checkpoint();
  at::Tensor& buffer = tensor_named(contents, "optimizer/0/momentum_buffer");
  buffer = buffer.to(at::kDouble);
  CHECK(checkpoint_error([&] { Run(with_optimizer(Optimizer::kSgd)).restore(contents); }) ==
        "'optimizer/0/momentum_buffer' is float64 in the checkpoint, float32 in the model");
}

TEST_CASE("a refused checkpoint leaves model and optimizer as they were") {
  for (const Optimizer optimizer : kOptimizers) {
    CAPTURE(config::to_string(optimizer));
    Run writer(with_optimizer(optimizer));
    writer.take_a_step();
    CheckpointContents contents = writer.checkpoint();
    // The last tensor checked: everything before it fits, and must still not be loaded.
    tensor_named(contents, "rng_states") = at::zeros({2, 8}, at::kByte);
    Run reader(with_optimizer(optimizer));
    reader.take_a_step();
    reader.take_a_step();
    const std::vector<at::Tensor> before = snapshot(reader);
    CHECK(contains(checkpoint_error([&] { reader.restore(contents); }), "rows of 8 bytes"));
    CHECK(same_snapshots(snapshot(reader), before));

    // A bad optimizer entry: the model tensors before it fit.
    contents = writer.checkpoint();
    const std::string first_state =
        optimizer == Optimizer::kSgd ? "optimizer/1/momentum_buffer" : "optimizer/1/exp_avg_sq";
    tensor_named(contents, first_state) = at::zeros({3});
    CHECK(contains(checkpoint_error([&] { reader.restore(contents); }), first_state));
    CHECK(same_snapshots(snapshot(reader), before));
  }
  Run writer;
  CheckpointContents contents = writer.checkpoint();
  tensor_named(contents, "model/fc.bias") = at::zeros({10}, at::kDouble);
  auto model = model::make_model(config::Model::kLinear);
  const at::Tensor weight = model->parameters()[0].detach().clone();
  CHECK(contains(checkpoint_error([&] {
                   checkpoint::restore_model(loaded(contents), config::Model::kLinear, *model);
                 }),
                 "'model/fc.bias' is float64"));
  CHECK(same_bits(model->parameters()[0], weight));
}

TEST_CASE("restored optimizer state is the run's own, not the checkpoint's tensors") {
  Run writer(with_optimizer(Optimizer::kAdam));
  writer.take_a_step();
  CheckpointContents contents = writer.checkpoint();
  const at::Tensor saved = tensor_named(contents, "optimizer/0/exp_avg").clone();
  Run reader(with_optimizer(Optimizer::kAdam));
  reader.restore(contents);
  reader.take_a_step();  // updates the moments in place
  CHECK(same_bits(tensor_named(contents, "optimizer/0/exp_avg"), saved));
}

TEST_CASE("SGD momentum and Adam state restore bit for bit") {
  for (const Optimizer optimizer : kOptimizers) {
    CAPTURE(config::to_string(optimizer));
    Run writer(with_optimizer(optimizer));
    writer.take_a_step();
    const CheckpointContents contents = writer.checkpoint();
    Run reader(with_optimizer(optimizer));
    reader.restore(contents);
    const auto written =
        checkpoint::optimizer_state_tensors(*writer.optimizer, writer.model->parameters());
    const auto read =
        checkpoint::optimizer_state_tensors(*reader.optimizer, reader.model->parameters());
    REQUIRE(written.size() == read.size());
    for (std::size_t i = 0; i < written.size(); ++i) {
      CHECK(written[i].first == read[i].first);
      CHECK(same_bits(written[i].second, read[i].second));
    }
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
