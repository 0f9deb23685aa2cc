// lib/distributed/keep_until_exit.cpp — the buffers given up on, in one list that is never freed.
#include "distributed/keep_until_exit.hpp"

#include <mutex>
#include <utility>
#include <vector>

namespace mnist_ddp::distributed {

void keep_until_exit(std::shared_ptr<const void> buffer) {
  // Never destroyed, to outlive static destructors; reachable, so leak checkers stay quiet.
  static auto* const kept = new std::vector<std::shared_ptr<const void>>();
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(buffer));
}

}  // namespace mnist_ddp::distributed
