// lib/distributed/make_communicator.hpp — provides: make_communicator, make_nccl_communicator.
#pragma once

#include <memory>
#include <optional>

#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Whether this build has the NCCL backend (cmake -DMNIST_DDP_NCCL=AUTO|ON found CUDA and NCCL).
bool nccl_built_in();

/// Collective: every rank joins one NCCL communicator on `device` (else local rank modulo the
/// visible GPUs). CommError on every rank without NCCL, without a GPU, for two ranks on one GPU
/// of one NCCL host, or when NCCL cannot start.
std::unique_ptr<Communicator> make_nccl_communicator(const World& world, double timeout_seconds,
                                                     std::optional<int> device = std::nullopt);

/// Collective: the plan's communicator, taking tensors on any device (Note [Staged collectives]).
std::unique_ptr<Communicator> make_communicator(const World& world, const DevicePlan& plan,
                                                double timeout_seconds);

}  // namespace mnist_ddp::distributed
