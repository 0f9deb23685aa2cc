// lib/model/mlp_net.cpp — a two-hidden-layer perceptron: 784 -> 256 -> 128 -> 10 with ReLU.
#include <torch/nn/modules/linear.h>

#include "model/classifier.hpp"

namespace mnist_ddp::model {
namespace {

class MlpNet final : public Classifier {
 public:
  MlpNet()
      : fc1_(register_module("fc1", torch::nn::Linear(28 * 28, 256))),
        fc2_(register_module("fc2", torch::nn::Linear(256, 128))),
        fc3_(register_module("fc3", torch::nn::Linear(128, 10))) {}

  at::Tensor forward(const at::Tensor& images) override {
    at::Tensor x = fc1_->forward(images.flatten(1)).relu_();  // (B, 256)
    x = fc2_->forward(x).relu_();                             // (B, 128)
    return fc3_->forward(x);                                  // (B, 10)
  }

 private:
  torch::nn::Linear fc1_, fc2_, fc3_;
};

}  // namespace

std::shared_ptr<Classifier> make_mlp_net() { return std::make_shared<MlpNet>(); }

}  // namespace mnist_ddp::model
