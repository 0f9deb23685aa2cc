// lib/dist/make_communicator.hpp — provides: make_nccl_communicator, the NCCL backend for the
// program on this rank's GPU, or a clear CommError where the build or the machine has none.
#pragma once

#include <memory>

#include "dist/communicator.hpp"
#include "dist/world.hpp"

namespace mnist_ddp::dist {

/// Whether this build has the NCCL backend (cmake -DMNIST_DDP_NCCL=AUTO|ON found CUDA and NCCL).
bool nccl_built_in();

/// Collective over `world`: every rank selects its GPU (local rank modulo the visible devices)
/// and joins one NCCL communicator; collectives that wait longer than `timeout_seconds` abort it
/// and throw. Throws CommError on every rank when this build has no NCCL backend, when any rank
/// has no CUDA device ("no CUDA device: ..."), or when NCCL cannot start.
std::unique_ptr<Communicator> make_nccl_communicator(const World& world, double timeout_seconds);

}  // namespace mnist_ddp::dist
