// lib/common/networks.hpp — provides: config::Model, the networks of --model, below config/ and
// model/, which both name them and stay independent of each other.
#pragma once

#include <array>

namespace mnist_ddp::config {

/// The networks model::make_model builds; choice_names gives their names, in this order.
enum class Model { kLinear, kMlp, kCnn, kFastCnn };
constexpr std::array<const char*, 4> choice_names(Model) {
  return {"linear", "mlp", "cnn", "fastcnn"};
}

}  // namespace mnist_ddp::config
