// lib/distributed/poll_wait.hpp — provides: what every polling wait for communication shares: the
// seconds since a start, and the pause between polls.
#pragma once

#include <chrono>

namespace mnist_ddp::distributed {

using PollClock = std::chrono::steady_clock;

/// Seconds from `start` until now.
double seconds_since(PollClock::time_point start);

/// Between polls: spin first (a step's allreduce is done within microseconds), then yield the
/// core (ranks may outnumber cores), then sleep (a long wait should cost nothing).
void pause_after(double waited_seconds);

}  // namespace mnist_ddp::distributed
