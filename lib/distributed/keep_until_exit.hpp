// lib/distributed/keep_until_exit.hpp — provides: keep_until_exit, for buffers still in use.
#pragma once

#include <memory>

namespace mnist_ddp::distributed {

/// Keeps `buffer` alive until exit: a late message into an abandoned operation's freed buffer
/// would corrupt memory.
void keep_until_exit(std::shared_ptr<const void> buffer);

}  // namespace mnist_ddp::distributed
