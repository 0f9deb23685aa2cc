// lib/ddp/parameter_broadcast.cpp — one broadcast per tensor, once per run.
#include "ddp/parameter_broadcast.hpp"

#include <torch/autograd.h>

namespace mnist_ddp::ddp {

void broadcast_parameters(distributed::Communicator& comm, torch::nn::Module& module,
                          bool communicate) {
  if (!communicate) return;
  torch::NoGradGuard no_grad;  // writing into leaf tensors that require grad
  const auto broadcast = [&comm](at::Tensor& tensor) {
    // MPI needs dense row-major memory; channels-last weights travel as a contiguous copy.
    at::Tensor buffer = tensor.contiguous();
    comm.broadcast(buffer, /*root=*/0);
    if (!buffer.is_same(tensor)) tensor.copy_(buffer);
  };
  for (at::Tensor tensor : module.parameters()) broadcast(tensor);
  for (at::Tensor tensor : module.buffers()) broadcast(tensor);
}

}  // namespace mnist_ddp::ddp
