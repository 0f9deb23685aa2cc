// tests/unit/test_make_optimizer.cpp — make_optimizer hands every option to the optimizer it
// makes: rate, momentum and weight decay to SGD; rate, betas and weight decay to Adam.
#include <doctest/doctest.h>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "train/device_optimizer.hpp"

namespace mnist_ddp::train {
namespace {

TEST_CASE("make_optimizer: SGD and Adam get the configured options") {
  const std::vector<at::Tensor> parameters = {at::zeros({3}).requires_grad_()};
  config::TrainConfig config;
  config.lr = 0.25;
  config.momentum = 0.5;
  config.weight_decay = 0.125;
  const auto sgd = make_optimizer(config, parameters);
  const auto& sgd_options =
      dynamic_cast<const torch::optim::SGDOptions&>(sgd->param_groups()[0].options());
  CHECK(sgd_options.lr() == 0.25);
  CHECK(sgd_options.momentum() == 0.5);
  CHECK(sgd_options.weight_decay() == 0.125);

  config.optimizer = config::Optimizer::kAdam;
  config.momentum = 0;
  config.adam_beta1 = 0.7;
  config.adam_beta2 = 0.9;
  const auto adam = make_optimizer(config, parameters);
  const auto& adam_options =
      dynamic_cast<const torch::optim::AdamOptions&>(adam->param_groups()[0].options());
  CHECK(adam_options.lr() == 0.25);
  CHECK(std::get<0>(adam_options.betas()) == 0.7);
  CHECK(std::get<1>(adam_options.betas()) == 0.9);
  CHECK(adam_options.weight_decay() == 0.125);
}

}  // namespace
}  // namespace mnist_ddp::train
