// lib/model/classifier.hpp — provides: Classifier (the interface every MNIST network implements)
// and make_model, which builds one by name.
#pragma once

#include <memory>
#include <string>

#include <torch/nn/module.h>

namespace mnist_ddp::model {

/// An MNIST network: normalized images in, class logits out. Losses take the logits
/// (cross_entropy applies log_softmax once; the networks never do).
class Classifier : public torch::nn::Module {
 public:
  /// (B, 1, 28, 28) float -> (B, 10) logits.
  virtual at::Tensor forward(const at::Tensor& images) = 0;
};

/// "linear", "mlp", "cnn" or "fastcnn"; initialised from LibTorch's current global seed.
/// Throws UsageError for another name.
std::shared_ptr<Classifier> make_model(const std::string& name);

// The networks, one file each.
std::shared_ptr<Classifier> make_linear_net();
std::shared_ptr<Classifier> make_mlp_net();
std::shared_ptr<Classifier> make_cnn_net();
std::shared_ptr<Classifier> make_fast_cnn_net();

}  // namespace mnist_ddp::model
