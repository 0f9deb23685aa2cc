// tests/support/nccl_comm.hpp — provides: make_nccl_communicator, an NCCL communicator for the MPI
// tests without a device plan.
#pragma once

#include <memory>
#include <optional>

#include "distributed/communicator.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::testing {

/// Collective: every rank joins one NCCL communicator on `device` (else local rank modulo the
/// visible GPUs). CommError on every rank without NCCL, without a GPU, for two ranks on one GPU
/// of one NCCL host, or when NCCL cannot start.
std::unique_ptr<distributed::Communicator> make_nccl_communicator(
    const distributed::World& world, double timeout_seconds,
    std::optional<int> device = std::nullopt);

}  // namespace mnist_ddp::testing
