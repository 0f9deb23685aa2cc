// lib/checkpoint/training_checkpoint.cpp — checkpoint contents of a training run, and their checks.
#include "checkpoint/training_checkpoint.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>

#include "checkpoint/optimizer_state.hpp"
#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

/// `saved` with each missing option at its default: what runs did before the option existed.
nlohmann::json with_earlier_defaults(nlohmann::json saved) {
  nlohmann::json defaults = training_shape(config::TrainConfig{}, /*train_size=*/0);
  // Not options added later: the data set's size, and the batch a global batch leaves out.
  defaults.erase("train_images");
  defaults.erase("batch_size");
  for (const auto& [key, value] : defaults.items()) {
    if (!saved.contains(key)) saved[key] = value;
  }
  return saved;
}

std::map<std::string, at::Tensor> by_name(const CheckpointContents& contents) {
  return std::map<std::string, at::Tensor>(contents.tensors.begin(), contents.tensors.end());
}

/// (model tensor, saved tensor) for each "model/" and "buffer/" name, checked, not yet copied.
std::vector<std::pair<at::Tensor, at::Tensor>> checked_module_tensors(
    const std::map<std::string, at::Tensor>& saved, model::Classifier& model) {
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs;
  const auto add = [&](const std::string& name, const at::Tensor& into) {
    const auto found = saved.find(name);
    if (found == saved.end()) throw CheckpointError("the checkpoint lacks '" + name + "'");
    check_fits(name, found->second, into);
    pairs.emplace_back(into, found->second);
  };
  for (const auto& item : model.named_parameters()) add("model/" + item.key(), item.value());
  for (const auto& item : model.named_buffers()) add("buffer/" + item.key(), item.value());
  return pairs;
}

/// Throws CheckpointError naming a saved tensor this run lacks: it is another model's.
void check_all_known(const std::map<std::string, at::Tensor>& saved,
                     const std::vector<std::pair<at::Tensor, at::Tensor>>& module_tensors,
                     const std::function<bool(const std::string&)>& also_known) {
  std::set<const at::TensorImpl*> used;
  for (const auto& [into, from] : module_tensors) used.insert(from.unsafeGetTensorImpl());
  for (const auto& [name, tensor] : saved) {
    if (!used.count(tensor.unsafeGetTensorImpl()) && !also_known(name)) {
      throw CheckpointError("the checkpoint holds '" + name + "', which this run does not have");
    }
  }
}

void copy_module_tensors(const std::vector<std::pair<at::Tensor, at::Tensor>>& pairs) {
  torch::NoGradGuard no_grad;
  for (const auto& [into, from] : pairs) into.copy_(from);
}

// Note [A generator state is a tensor of its own]: LibTorch 2.14's set_state (not 1.13's or 2.6's)
// misreads a row of the (ranks, bytes) tensor, a view inside its storage, so each row is cloned.
/// The checkpoint's RNG states: uint8, a row per rank, each one a CPU generator accepts.
at::Tensor checked_rng_states(const std::map<std::string, at::Tensor>& saved, int world_size) {
  const auto found = saved.find("rng_states");
  if (found == saved.end()) {
    throw CheckpointError("the checkpoint lacks its RNG states 'rng_states'");
  }
  const at::Tensor& states = found->second;
  if (states.dim() != 2 || states.size(0) != world_size) {
    throw CheckpointError("the checkpoint's RNG states 'rng_states' have shape " +
                          c10::str(states.sizes()) + ", not one row for each of its " +
                          std::to_string(world_size) + " ranks");
  }
  if (states.scalar_type() != at::kByte) {
    throw CheckpointError("the checkpoint's RNG states 'rng_states' are " +
                          type_name(states.scalar_type()) + ", not uint8");
  }
  // A scratch generator: checking must not disturb the process's default one.
  at::Generator scratch = at::detail::createCPUGenerator();
  const std::int64_t width = scratch.get_state().numel();
  if (states.size(1) != width) {
    throw CheckpointError("the checkpoint's RNG states 'rng_states' have rows of " +
                          std::to_string(states.size(1)) + " bytes, not the " +
                          std::to_string(width) + " of a CPU generator state");
  }
  for (std::int64_t rank = 0; rank < world_size; ++rank) {
    try {
      scratch.set_state(generator_state(states, rank));
    } catch (const c10::Error& e) {
      throw CheckpointError(
          "the checkpoint's RNG state of rank " + std::to_string(rank) +
          " in 'rng_states' is not a CPU generator state: " + e.what_without_backtrace());
    }
  }
  return states;
}

/// CUDA generator states, undefined when none; uint8, a row per rank (set_state judges width).
at::Tensor checked_cuda_rng_states(const std::map<std::string, at::Tensor>& saved, int world_size) {
  const auto found = saved.find("cuda_rng_states");
  if (found == saved.end()) return {};
  const at::Tensor& states = found->second;
  if (states.dim() != 2 || states.size(0) != world_size || states.scalar_type() != at::kByte) {
    throw CheckpointError("the checkpoint's CUDA RNG states 'cuda_rng_states' are " +
                          type_name(states.scalar_type()) + " of shape " +
                          c10::str(states.sizes()) + ", not a uint8 row for each of its " +
                          std::to_string(world_size) + " ranks");
  }
  return states;
}

}  // namespace

at::Tensor generator_state(const at::Tensor& states, std::int64_t rank) {
  return states[rank].clone();  // Note [A generator state is a tensor of its own]
}

nlohmann::json training_shape(const config::TrainConfig& config, std::int64_t train_size,
                              const config::OptionTable& options) {
  nlohmann::json shape = {{"train_images", train_size}};
  for (const auto& [title, group] : options) {
    for (const config::Option& option : group) {
      if (option.scope != config::Scope::kTraining) continue;
      std::string key = option.name;
      std::replace(key.begin(), key.end(), '-', '_');
      shape[key] = std::visit([](const auto& v) { return nlohmann::json(v); }, option.get(config));
    }
  }
  // A schedule spans the steps of --epochs; a constant rate lets a run be extended.
  shape["schedule_epochs"] = config.lr_schedule == config::Schedule::kConstant ? 0 : config.epochs;
  // The share of each rank follows from the world size, which may change on resume.
  if (config.global_batch_size > 0) shape.erase("batch_size");
  return shape;
}

std::string shape_differences(const nlohmann::json& saved, const nlohmann::json& current) {
  // The keys that are not an option's name; the others are, with '-' for '_'.
  const std::map<std::string, std::string> labels = {
      {"train_images", "training images"}, {"schedule_epochs", "--epochs of the --lr-schedule"}};
  std::string differences;
  for (const auto& [key, value] : current.items()) {
    if (!saved.contains(key) || saved.at(key) != value) {
      std::string option = "--" + key;
      std::replace(option.begin(), option.end(), '_', '-');
      const auto label = labels.find(key);
      if (!differences.empty()) differences += "; ";
      differences += (label != labels.end() ? label->second : option) + ": checkpoint " +
                     (saved.contains(key) ? saved.at(key).dump() : "none") + ", this run " +
                     value.dump();
    }
  }
  return differences;
}

CheckpointContents make_checkpoint(const config::TrainConfig& config, std::int64_t train_size,
                                   int world_size, const TrainProgress& progress,
                                   model::Classifier& model, torch::optim::Optimizer& optimizer,
                                   const at::Tensor& rng_states,
                                   const at::Tensor& cuda_rng_states) {
  CheckpointContents contents;
  contents.meta = to_json({"", world_size, progress, training_shape(config, train_size)});
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
  if (cuda_rng_states.defined()) contents.tensors.emplace_back("cuda_rng_states", cuda_rng_states);
  return contents;
}

// Note [Restore is all or nothing]: every tensor is checked before any is copied, so a refused
// checkpoint leaves model and optimizer unchanged (only GPU out-of-memory can stop half way).
RestoredRun restore_checkpoint(const LoadedCheckpoint& loaded, const config::TrainConfig& config,
                               std::int64_t train_size, model::Classifier& model,
                               torch::optim::Optimizer& optimizer) {
  const std::string differences = shape_differences(with_earlier_defaults(loaded.meta.training),
                                                    training_shape(config, train_size));
  if (!differences.empty()) {
    throw CheckpointError("the checkpoint belongs to another run (" + differences +
                          "); use its options, or another --checkpoint-dir");
  }
  const std::map<std::string, at::Tensor> saved = by_name(loaded.contents);
  const auto module_tensors = checked_module_tensors(saved, model);
  const std::vector<std::string> state_names =
      optimizer_state_names(optimizer, model.parameters().size());
  check_all_known(saved, module_tensors, [&](const std::string& name) {
    return name == "rng_states" || name == "cuda_rng_states" ||
           std::find(state_names.begin(), state_names.end(), name) != state_names.end();
  });
  at::Tensor rng_states = checked_rng_states(saved, loaded.meta.world_size);
  at::Tensor cuda_rng_states = checked_cuda_rng_states(saved, loaded.meta.world_size);
  load_optimizer_state(optimizer, model.parameters(), saved);
  copy_module_tensors(module_tensors);
  return RestoredRun{std::move(rng_states), std::move(cuda_rng_states)};
}

void restore_model(const LoadedCheckpoint& loaded, config::Model architecture,
                   model::Classifier& model) {
  const nlohmann::json name = loaded.meta.training.value("model", nlohmann::json("unknown"));
  const std::string saved_model = name.is_string() ? name.get<std::string>() : name.dump();
  const std::string model_name = config::to_string(architecture);
  if (saved_model != model_name) {
    throw CheckpointError("the checkpoint holds a '" + saved_model + "' model, not '" + model_name +
                          "' (pass --model " + saved_model + ")");
  }
  const std::map<std::string, at::Tensor> saved = by_name(loaded.contents);
  const auto module_tensors = checked_module_tensors(saved, model);
  // The optimizer and generator states are the training run's, not the model's.
  check_all_known(saved, module_tensors, [](const std::string& name) {
    return name.rfind("model/", 0) != 0 && name.rfind("buffer/", 0) != 0;
  });
  copy_module_tensors(module_tensors);
}

}  // namespace mnist_ddp::checkpoint
