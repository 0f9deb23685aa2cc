// lib/ddp/parameter_broadcast.hpp — provides: broadcast_parameters (rank 0's state to all).
#pragma once

#include <torch/nn/module.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::ddp {

/// Copies rank 0's parameters and buffers to every rank, whatever their seeds; a no-op unless
/// `communicate` (DevicePlan::communicates).
void broadcast_parameters(distributed::Communicator& comm, torch::nn::Module& module,
                          bool communicate);

}  // namespace mnist_ddp::ddp
