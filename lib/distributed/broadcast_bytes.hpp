// lib/distributed/broadcast_bytes.hpp — provides: broadcast_bytes, rank 0's bytes to every rank.
#pragma once

#include <string>

#include "distributed/communicator.hpp"

namespace mnist_ddp::distributed {

/// Collective: rank 0's `bytes` on every rank; other ranks' argument is ignored.
std::string broadcast_bytes(Communicator& comm, const std::string& bytes);

}  // namespace mnist_ddp::distributed
