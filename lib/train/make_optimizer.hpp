// lib/train/make_optimizer.hpp — provides: make_optimizer, the optimizer named by the config.
#pragma once

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "config/train_config.hpp"

namespace mnist_ddp::train {

/// SGD (with momentum and weight decay) or Adam over `parameters`, as `config` says.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const config::TrainConfig& config,
                                                        std::vector<at::Tensor> parameters);

}  // namespace mnist_ddp::train
