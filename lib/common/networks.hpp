// lib/common/networks.hpp — provides: config::Model, here as config/ and model/ both name it.
#pragma once

#include <array>

namespace mnist_ddp::config {

/// The networks model::make_model builds; choice_names gives their names, in this order.
enum class Model { kLinear, kMlp, kCnn, kFastCnn };
constexpr std::array<const char*, 4> choice_names(Model) {
  return {"linear", "mlp", "cnn", "fastcnn"};
}

}  // namespace mnist_ddp::config
