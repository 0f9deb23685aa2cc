// lib/model/linear_net.cpp — the classic one-layer tutorial network: 784 -> 10.
#include <torch/nn/modules/linear.h>

#include "model/classifier.hpp"

namespace mnist_ddp::model {
namespace {

class LinearNet final : public Classifier {
 public:
  LinearNet() : fc_(register_module("fc", torch::nn::Linear(28 * 28, 10))) {}

  at::Tensor forward(const at::Tensor& images) override {
    return fc_->forward(images.flatten(1));  // (B, 784) -> (B, 10)
  }

 private:
  torch::nn::Linear fc_;
};

}  // namespace

std::shared_ptr<Classifier> make_linear_net() { return std::make_shared<LinearNet>(); }

}  // namespace mnist_ddp::model
