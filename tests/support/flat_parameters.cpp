// tests/support/flat_parameters.cpp — a model's parameters concatenated.
#include "support/flat_parameters.hpp"

#include <vector>

#include <ATen/ATen.h>

namespace mnist_ddp::testing {

at::Tensor flat_parameters(const torch::nn::Module& model) {
  std::vector<at::Tensor> flat;
  for (const at::Tensor& p : model.parameters()) flat.push_back(p.detach().reshape({-1}));
  return at::cat(flat);
}

}  // namespace mnist_ddp::testing
