// lib/distributed/keep_until_exit.hpp — provides: keep_until_exit(buffer), for memory that MPI or
// a GPU may still read or write after its owner stopped waiting for it.
#pragma once

#include <memory>

namespace mnist_ddp::distributed {

/// Keeps `buffer` alive, and reachable, until the process ends: the buffer of a send, receive or
/// collective that was given up (it timed out, or an error is on its way to MPI_Abort) may still
/// be used, and freeing it would let a late message write into freed memory.
void keep_until_exit(std::shared_ptr<const void> buffer);

}  // namespace mnist_ddp::distributed
