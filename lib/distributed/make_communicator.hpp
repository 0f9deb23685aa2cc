// lib/distributed/make_communicator.hpp — provides: make_communicator, the transport a run's plan
// asks for, and make_nccl_communicator, the NCCL backend on this rank's GPU, or a clear CommError
// where the build or the machine has none.
#pragma once

#include <memory>
#include <optional>

#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Whether this build has the NCCL backend (cmake -DMNIST_DDP_NCCL=AUTO|ON found CUDA and NCCL).
bool nccl_built_in();

/// Collective over `world`: every rank makes its GPU current (`device`, the plan's; without it
/// local rank modulo the visible devices) and joins one NCCL communicator; collectives that wait
/// longer than `timeout_seconds` abort it and throw. Throws CommError on every rank when this
/// build has no NCCL backend, when any rank has no CUDA device ("no CUDA device: ..."), when two
/// ranks of a node would share a GPU, or when NCCL cannot start.
std::unique_ptr<Communicator> make_nccl_communicator(const World& world, double timeout_seconds,
                                                     std::optional<int> device = std::nullopt);

/// Collective: the communicator for `plan` — NCCL on this rank's GPU, or MPI over `world` — taking
/// tensors on any device (Note [Staged collectives]): under MPI a CUDA tensor travels through host
/// memory.
std::unique_ptr<Communicator> make_communicator(const World& world, const DevicePlan& plan,
                                                double timeout_seconds);

}  // namespace mnist_ddp::distributed
