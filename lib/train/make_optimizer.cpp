// lib/train/make_optimizer.cpp — optimizers by name.
#include "train/make_optimizer.hpp"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

namespace mnist_ddp::train {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const config::TrainConfig& config,
                                                        std::vector<at::Tensor> parameters) {
  if (config.optimizer == config::Optimizer::kSgd) {
    return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                               torch::optim::SGDOptions(config.lr)
                                                   .momentum(config.momentum)
                                                   .weight_decay(config.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(std::move(parameters),
                                              torch::optim::AdamOptions(config.lr)
                                                  .betas({config.adam_beta1, config.adam_beta2})
                                                  .weight_decay(config.weight_decay));
}

}  // namespace mnist_ddp::train
