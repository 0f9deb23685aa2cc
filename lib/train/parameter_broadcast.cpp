// lib/train/parameter_broadcast.cpp — one broadcast per tensor; this runs once per run.
#include "train/parameter_broadcast.hpp"

#include <torch/autograd.h>

namespace mnist_ddp::train {

void broadcast_parameters(dist::Communicator& comm, torch::nn::Module& module) {
  if (comm.size() == 1) return;
  torch::NoGradGuard no_grad;  // writing into leaf tensors that require grad
  for (at::Tensor tensor : module.parameters()) comm.broadcast(tensor, /*root=*/0);
  for (at::Tensor tensor : module.buffers()) comm.broadcast(tensor, /*root=*/0);
}

}  // namespace mnist_ddp::train
