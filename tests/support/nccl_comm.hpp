// tests/support/nccl_comm.hpp — provides: make_nccl_communicator, an NCCL communicator for the MPI
// tests without a device plan, and the device it picks (device_for_local_rank).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "distributed/communicator.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::testing {

/// local_rank modulo `device_count` (under srun --gpus-per-task=1 each task sees its own as 0).
/// Ranks that outnumber the devices share one, which NCCL refuses.
inline int device_for_local_rank(int local_rank, int device_count) {
  MDDP_INTERNAL_ASSERT(local_rank >= 0 && device_count >= 1,
                       "device_for_local_rank(" + std::to_string(local_rank) + ", " +
                           std::to_string(device_count) + ")");
  return local_rank % device_count;
}

/// Collective: every rank joins one NCCL communicator on `device` (else local rank modulo the
/// visible GPUs). CommError on every rank without NCCL, without a GPU, for two ranks on one GPU
/// of one NCCL host, or when NCCL cannot start.
std::unique_ptr<distributed::Communicator> make_nccl_communicator(
    const distributed::World& world, double timeout_seconds,
    std::optional<int> device = std::nullopt);

}  // namespace mnist_ddp::testing
