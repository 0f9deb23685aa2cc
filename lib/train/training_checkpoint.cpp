// lib/train/training_checkpoint.cpp — checkpoint contents of a training run, and their checks.
#include "train/training_checkpoint.hpp"

#include <map>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/version.h>

#include "common/error.hpp"
#include "train/optimizer_state.hpp"

namespace mnist_ddp::train {
namespace {

constexpr const char* kFormatName = "mnist_ddp checkpoint";

/// The options that shape training (and the data set size the sample positions refer to): a
/// checkpoint only continues a run that agrees on all of them. The world size may differ.
nlohmann::json training_shape(const config::TrainConfig& c, std::int64_t train_size) {
  return {{"model", c.model},
          {"optimizer", c.optimizer},
          {"lr", c.lr},
          {"momentum", c.momentum},
          {"weight_decay", c.weight_decay},
          {"batch_size", c.batch_size},
          {"seed", c.seed},
          {"normalize_mean", c.normalize_mean},
          {"normalize_std", c.normalize_std},
          {"drop_last", c.drop_last},
          {"grad_accum", c.grad_accum},
          {"grad_dtype", c.grad_dtype},
          {"train_images", train_size}};
}

void check_format(const io::CheckpointContents& contents) {
  if (contents.meta.value("format", "") != kFormatName) {
    throw CheckpointError("not an mnist_ddp training checkpoint (format '" +
                          contents.meta.value("format", "") + "')");
  }
}

/// "--model: checkpoint cnn, this run linear; --lr: ..." for every option that differs.
void check_same_shape(const nlohmann::json& saved, const nlohmann::json& current) {
  std::string differences;
  for (const auto& [key, value] : current.items()) {
    if (!saved.contains(key) || saved.at(key) != value) {
      std::string option = key;
      std::replace(option.begin(), option.end(), '_', '-');
      if (!differences.empty()) differences += "; ";
      differences += (key == "train_images" ? "training images" : "--" + option) + ": checkpoint " +
                     (saved.contains(key) ? saved.at(key).dump() : "none") + ", this run " +
                     value.dump();
    }
  }
  if (!differences.empty()) {
    throw CheckpointError("the checkpoint belongs to another run (" + differences +
                          "); use its options, or another --checkpoint-dir");
  }
}

std::map<std::string, at::Tensor> by_name(const io::CheckpointContents& contents) {
  return std::map<std::string, at::Tensor>(contents.tensors.begin(), contents.tensors.end());
}

/// Copies "model/<name>" and "buffer/<name>" into the module, checking names and shapes.
void load_module_tensors(const std::map<std::string, at::Tensor>& saved, model::Classifier& model) {
  torch::NoGradGuard no_grad;
  const auto load = [&saved](const std::string& name, at::Tensor& into) {
    const auto found = saved.find(name);
    if (found == saved.end()) throw CheckpointError("the checkpoint lacks '" + name + "'");
    if (!found->second.sizes().equals(into.sizes())) {
      throw CheckpointError("'" + name + "' has shape " + c10::str(found->second.sizes()) +
                            " in the checkpoint, " + c10::str(into.sizes()) + " in the model");
    }
    into.copy_(found->second);
  };
  for (auto& item : model.named_parameters()) load("model/" + item.key(), item.value());
  for (auto& item : model.named_buffers()) load("buffer/" + item.key(), item.value());
}

}  // namespace

io::CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                       int world_size, const TrainProgress& progress,
                                       model::Classifier& model, torch::optim::Optimizer& optimizer,
                                       const at::Tensor& rng_states) {
  io::CheckpointContents contents;
  contents.meta = {{"format", kFormatName},
                   {"mnist_ddp_version", MNIST_DDP_VERSION},
                   {"libtorch_version", TORCH_VERSION},
                   {"world_size", world_size},
                   {"training", training_shape(config, train_size)},
                   {"progress",
                    {{"epoch", progress.epoch},
                     {"step", progress.step},
                     {"position", progress.position},
                     {"loss_sum", progress.loss_sum},
                     {"loss_count", progress.loss_count},
                     {"images", progress.images}}}};
  for (const auto& item : model.named_parameters()) {
    contents.tensors.emplace_back("model/" + item.key(), item.value());
  }
  for (const auto& item : model.named_buffers()) {
    contents.tensors.emplace_back("buffer/" + item.key(), item.value());
  }
  for (auto& entry : optimizer_state_tensors(optimizer, model.parameters())) {
    contents.tensors.push_back(std::move(entry));
  }
  contents.tensors.emplace_back("rng_states", rng_states);
  return contents;
}

RestoredRun restore_checkpoint(const io::CheckpointContents& contents,
                               const config::TrainConfig& config, std::int64_t train_size,
                               model::Classifier& model, torch::optim::Optimizer& optimizer) {
  check_format(contents);
  try {
    check_same_shape(contents.meta.at("training"), training_shape(config, train_size));
    const std::map<std::string, at::Tensor> saved = by_name(contents);
    load_module_tensors(saved, model);
    load_optimizer_state(optimizer, model.parameters(), saved);

    RestoredRun run;
    const nlohmann::json& p = contents.meta.at("progress");
    run.progress = {p.at("epoch").get<std::int64_t>(),      p.at("step").get<std::int64_t>(),
                    p.at("position").get<std::int64_t>(),   p.at("loss_sum").get<double>(),
                    p.at("loss_count").get<std::int64_t>(), p.at("images").get<std::int64_t>()};
    run.world_size = contents.meta.at("world_size").get<int>();
    run.rng_states = saved.at("rng_states");
    if (run.progress.epoch < 0 || run.progress.step < 0 || run.progress.position < 0 ||
        run.world_size < 1 || run.rng_states.dim() != 2 ||
        run.rng_states.size(0) != run.world_size) {
      throw CheckpointError("the checkpoint's progress record is inconsistent");
    }
    return run;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(std::string("the checkpoint's header is incomplete: ") + e.what());
  } catch (const std::out_of_range&) {
    throw CheckpointError("the checkpoint lacks its RNG states");
  }
}

void restore_model(const io::CheckpointContents& contents, const std::string& model_name,
                   model::Classifier& model) {
  check_format(contents);
  const std::string saved = contents.meta.value("training", nlohmann::json::object())
                                .value("model", std::string("unknown"));
  if (saved != model_name) {
    throw CheckpointError("the checkpoint holds a '" + saved + "' model, not '" + model_name +
                          "' (pass --model " + saved + ")");
  }
  load_module_tensors(by_name(contents), model);
}

}  // namespace mnist_ddp::train
