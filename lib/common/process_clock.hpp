// lib/common/process_clock.hpp — provides: seconds_since_process_start, seconds_since.
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
