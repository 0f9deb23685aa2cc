// lib/ddp/parameter_broadcast.hpp — provides: broadcast_parameters, which makes every rank
// start from rank 0's parameters and buffers.
#pragma once

#include <torch/nn/module.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::ddp {

/// Copies rank 0's parameters and buffers to every rank, so all replicas start identical even
/// if they were initialised with different seeds; nothing unless the ranks `communicate`
/// (DevicePlan::communicates).
void broadcast_parameters(distributed::Communicator& comm, torch::nn::Module& module,
                          bool communicate);

}  // namespace mnist_ddp::ddp
