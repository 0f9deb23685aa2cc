// lib/model/fast_cnn_net.cpp — tuomaso/train_mnist_fast's network.
#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "model/channels_last.hpp"
#include "model/classifier.hpp"
#include "model/fast_cnn_layers.hpp"

namespace mnist_ddp::model {
namespace {

class FastCnnNet final : public Classifier {
 public:
  FastCnnNet()
      : conv1_(register_module(
            "conv1", torch::nn::Conv2d(1, fast_cnn::kConv1Outputs, fast_cnn::kConv1Kernel))),
        conv2_(register_module("conv2",
                               torch::nn::Conv2d(fast_cnn::kConv1Outputs, fast_cnn::kConv2Outputs,
                                                 fast_cnn::kConv2Kernel))),
        fc1_(register_module("fc1", torch::nn::Linear(fast_cnn::kFeatures, 256))),
        fc2_(register_module("fc2", torch::nn::Linear(256, 10))) {
    to_channels_last({conv1_->weight, conv2_->weight});  // Note [Channels-last convolutions]
  }

  at::Tensor forward(const at::Tensor& images) override {
    // Note [The input convolution pools as it goes]
    at::Tensor x = input_conv_pool(images, conv1_->weight, conv1_->bias);  // (B, 24, 12, 12)
    x = conv_pooled_features(x, conv2_->weight, conv2_->bias);             // (B, 32 * 5 * 5)
    x = fc1_->forward(x).relu_();                                          // (B, 256)
    return fc2_->forward(x);                                               // (B, 10)
  }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::Linear fc1_, fc2_;
};

}  // namespace

std::shared_ptr<Classifier> make_fast_cnn_net() { return std::make_shared<FastCnnNet>(); }

}  // namespace mnist_ddp::model
