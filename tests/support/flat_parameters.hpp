// tests/support/flat_parameters.hpp — provides: flat_parameters, a model's parameters as one
// vector, so tests can compare whole models after training.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace mnist_ddp::testing {

/// Every parameter of `model`, detached and flattened, concatenated in registration order.
at::Tensor flat_parameters(const torch::nn::Module& model);

}  // namespace mnist_ddp::testing
