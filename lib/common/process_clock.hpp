// lib/common/process_clock.hpp — provides: seconds_since_process_start, the time since the
// kernel started this process (before the dynamic loader ran), for honest start-up figures.
#pragma once

namespace mnist_ddp {

/// Seconds since this process was created, to the kernel's clock tick (usually 10 ms).
double seconds_since_process_start();

}  // namespace mnist_ddp
