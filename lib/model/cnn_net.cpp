// lib/model/cnn_net.cpp — PyTorch's MNIST example network.
#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "model/channels_last.hpp"
#include "model/classifier.hpp"
#include "model/dropout.hpp"
#include "model/pooled_features.hpp"

namespace mnist_ddp::model {
namespace {

// Note [Channels-last convolutions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// oneDNN is faster in NHWC only if every tensor from the input to the flatten is channels-last,
// gradients included (a mixed-layout element-wise backward is far slower): the one-channel input
// gets explicit channels-last strides (channels_last_input), and the map is flattened in C, H, W
// order (fc1 expects it) before dropout, which then runs contiguous.

class CnnNet final : public Classifier {
 public:
  CnnNet()
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3)))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3)))),
        fc1_(register_module("fc1", torch::nn::Linear(9216, 128))),
        fc2_(register_module("fc2", torch::nn::Linear(128, 10))) {
    to_channels_last({conv1_->weight, conv2_->weight});  // Note [Channels-last convolutions]
  }

  at::Tensor forward(const at::Tensor& images) override {
    // Note [Channels-last convolutions]
    const at::Tensor input = channels_last_input(images);
    at::Tensor x = conv1_->forward(input).relu_();  // (B, 32, 26, 26)
    // ReLU commutes with max-pooling, so the fused kernel applies it to the 4x smaller map.
    x = pooled_features(conv2_->forward(x));  // (B, 64, 24, 24) -> (B, 64 * 12 * 12)
    // Dropout is element-wise with independent draws, so it commutes with the flatten.
    x = inverted_dropout(x, 0.25, is_training());                   // (B, 9216)
    x = fc1_->forward(x).relu_();                                   // (B, 128)
    return fc2_->forward(inverted_dropout(x, 0.5, is_training()));  // (B, 10)
  }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::Linear fc1_, fc2_;
};

}  // namespace

std::shared_ptr<Classifier> make_cnn_net() { return std::make_shared<CnnNet>(); }

}  // namespace mnist_ddp::model
