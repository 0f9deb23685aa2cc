// lib/checkpoint/training_checkpoint.cpp — checkpoint contents of a training run, and their checks.
#include "checkpoint/training_checkpoint.hpp"

#include <map>

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "checkpoint/optimizer_state.hpp"
#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

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

std::map<std::string, at::Tensor> by_name(const CheckpointContents& contents) {
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

std::string shape_differences(const nlohmann::json& saved, const nlohmann::json& current) {
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
  return differences;
}

CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                   int world_size, const TrainProgress& progress,
                                   model::Classifier& model, torch::optim::Optimizer& optimizer,
                                   const at::Tensor& rng_states) {
  CheckpointContents contents;
  contents.meta = to_json({world_size, progress, training_shape(config, train_size)});
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

RestoredRun restore_checkpoint(const CheckpointContents& contents,
                               const config::TrainConfig& config, std::int64_t train_size,
                               model::Classifier& model, torch::optim::Optimizer& optimizer) {
  const CheckpointMeta meta = read_checkpoint_meta(contents.meta);
  const std::string differences =
      shape_differences(meta.training, training_shape(config, train_size));
  if (!differences.empty()) {
    throw CheckpointError("the checkpoint belongs to another run (" + differences +
                          "); use its options, or another --checkpoint-dir");
  }
  const std::map<std::string, at::Tensor> saved = by_name(contents);
  load_module_tensors(saved, model);
  load_optimizer_state(optimizer, model.parameters(), saved);
  const auto rng_states = saved.find("rng_states");
  if (rng_states == saved.end()) throw CheckpointError("the checkpoint lacks its RNG states");
  if (rng_states->second.dim() != 2 || rng_states->second.size(0) != meta.world_size) {
    throw CheckpointError("the checkpoint's RNG states have shape " +
                          c10::str(rng_states->second.sizes()) + ", not one row for each of its " +
                          std::to_string(meta.world_size) + " ranks");
  }
  return RestoredRun{meta.progress, meta.world_size, rng_states->second};
}

void restore_model(const CheckpointContents& contents, const std::string& model_name,
                   model::Classifier& model) {
  const nlohmann::json name =
      read_checkpoint_meta(contents.meta).training.value("model", nlohmann::json("unknown"));
  const std::string saved = name.is_string() ? name.get<std::string>() : name.dump();
  if (saved != model_name) {
    throw CheckpointError("the checkpoint holds a '" + saved + "' model, not '" + model_name +
                          "' (pass --model " + saved + ")");
  }
  load_module_tensors(by_name(contents), model);
}

}  // namespace mnist_ddp::checkpoint
