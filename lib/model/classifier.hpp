// lib/model/classifier.hpp — provides: Classifier (every network's interface), make_model.
#pragma once

#include <memory>

#include <torch/nn/module.h>

#include "common/networks.hpp"

namespace mnist_ddp::model {

/// Normalized images in, logits out: classification_loss applies the softmax, so networks never do.
class Classifier : public torch::nn::Module {
 public:
  /// (B, 1, 28, 28) float -> (B, 10) logits.
  virtual at::Tensor forward(const at::Tensor& images) = 0;
};

/// The network of --model `model`, initialised from the global seed.
std::shared_ptr<Classifier> make_model(config::Model model);

// The networks, one file each.
std::shared_ptr<Classifier> make_linear_net();
std::shared_ptr<Classifier> make_mlp_net();
std::shared_ptr<Classifier> make_cnn_net();
std::shared_ptr<Classifier> make_fast_cnn_net();

}  // namespace mnist_ddp::model
