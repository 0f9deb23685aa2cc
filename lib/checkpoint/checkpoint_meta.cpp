// lib/checkpoint/checkpoint_meta.cpp — the keys of a training checkpoint's header.
#include "checkpoint/checkpoint_meta.hpp"

#include <limits>
#include <optional>

#include <torch/version.h>

#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

constexpr const char* kFormatName = "mnist_ddp checkpoint";

/// The member `key` of `object` (named `where` in errors), which must be present.
const nlohmann::json& field(const nlohmann::json& object, const std::string& where,
                            const char* key) {
  if (!object.is_object() || !object.contains(key)) {
    throw CheckpointError("the checkpoint's header lacks '" + where + key + "'");
  }
  return object.at(key);
}

/// A field that must be an integer of at least `minimum`.
template <typename T>
T integer_field(const nlohmann::json& object, const std::string& where, const char* key,
                T minimum) {
  const std::optional<T> value = exact_integer<T>(field(object, where, key));
  if (!value || *value < minimum) {
    throw CheckpointError("the checkpoint's header has '" + where + key +
                          "' = " + field(object, where, key).dump() + ", not an integer from " +
                          std::to_string(minimum) + " to " +
                          std::to_string(std::numeric_limits<T>::max()));
  }
  return *value;
}

}  // namespace

nlohmann::json to_json(const CheckpointMeta& meta) {
  const TrainProgress& p = meta.progress;
  return {{"format", kFormatName},
          {"mnist_ddp_version", MNIST_DDP_VERSION},
          {"libtorch_version", TORCH_VERSION},
          {"run", meta.run},
          {"world_size", meta.world_size},
          {"training", meta.training},
          {"progress",
           {{"epoch", p.epoch},
            {"step", p.step},
            {"position", p.position},
            {"loss_sum", p.loss_sum},
            {"loss_count", p.loss_count},
            {"images", p.images}}}};
}

CheckpointMeta read_checkpoint_meta(const nlohmann::json& header) {
  const nlohmann::json format =
      header.is_object() ? header.value("format", nlohmann::json()) : nullptr;
  if (!format.is_string() || format.get<std::string>() != kFormatName) {
    throw CheckpointError("not an mnist_ddp training checkpoint (format " + format.dump() + ")");
  }
  CheckpointMeta meta;
  const nlohmann::json run = header.value("run", nlohmann::json(""));  // absent before run ids
  if (!run.is_string()) {
    throw CheckpointError("the checkpoint's header has 'run' = " + run.dump() + ", not a string");
  }
  meta.run = run.get<std::string>();
  meta.world_size = integer_field<int>(header, "", "world_size", 1);
  meta.training = field(header, "", "training");
  if (!meta.training.is_object()) {
    throw CheckpointError("the checkpoint's header has 'training' = " + meta.training.dump() +
                          ", not an object");
  }
  // A copy: GCC 13 and later warn of a reference returned through a temporary argument ("").
  const nlohmann::json p = field(header, "", "progress");
  const std::string where = "progress.";
  meta.progress.epoch = integer_field<std::int64_t>(p, where, "epoch", 0);
  meta.progress.step = integer_field<std::int64_t>(p, where, "step", 0);
  meta.progress.position = integer_field<std::int64_t>(p, where, "position", 0);
  meta.progress.loss_count = integer_field<std::int64_t>(p, where, "loss_count", 0);
  meta.progress.images = integer_field<std::int64_t>(p, where, "images", 0);
  const nlohmann::json& loss_sum = field(p, where, "loss_sum");
  if (!loss_sum.is_number()) {
    throw CheckpointError("the checkpoint's header has 'progress.loss_sum' = " + loss_sum.dump() +
                          ", not a number");
  }
  meta.progress.loss_sum = loss_sum.get<double>();
  return meta;
}

LoadedCheckpoint decode_training_checkpoint(const std::string& bytes, const std::string& origin) {
  CheckpointContents contents = decode_checkpoint(bytes, origin);
  return {read_checkpoint_meta(contents.meta), std::move(contents)};  // braced: in this order
}

}  // namespace mnist_ddp::checkpoint
