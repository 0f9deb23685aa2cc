// lib/common/process_clock.hpp — provides: seconds_since_process_start, the time since the
// kernel started this process (before the dynamic loader ran), for honest start-up figures, and
// seconds_since, the steady clock's seconds from a point until now.
#pragma once

#include <chrono>

namespace mnist_ddp {

/// Seconds from `start` until now.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Seconds since this process was created, to the kernel's clock tick (usually 10 ms).
double seconds_since_process_start();

}  // namespace mnist_ddp
