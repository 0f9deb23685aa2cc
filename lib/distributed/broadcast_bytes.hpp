// lib/distributed/broadcast_bytes.hpp — provides: broadcast_bytes, a byte string of any length from
// rank 0 to every rank (checkpoints read by one rank).
#pragma once

#include <string>

#include "distributed/communicator.hpp"

namespace mnist_ddp::distributed {

/// Collective: rank 0's `bytes` on every rank (the size travels first); other ranks' argument
/// is ignored.
std::string broadcast_bytes(Communicator& comm, const std::string& bytes);

}  // namespace mnist_ddp::distributed
