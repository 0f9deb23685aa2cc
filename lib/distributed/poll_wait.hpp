// lib/distributed/poll_wait.hpp — provides: what every polling wait for communication shares: its
// clock, the pause between polls, and poll_until, the loop made of them.
#pragma once

#include <chrono>
#include <functional>

#include "common/process_clock.hpp"

namespace mnist_ddp::distributed {

using PollClock = std::chrono::steady_clock;

/// Between polls: spin first (a step's allreduce is done within microseconds), then yield the
/// core (ranks may outnumber cores), then sleep (a long wait should cost nothing).
void pause_after(double waited_seconds);

/// Calls `done_yet` until it returns true (then returns true) or more than `timeout_seconds` have
/// passed (then returns false), pausing between calls as pause_after says.
bool poll_until(const std::function<bool()>& done_yet, double timeout_seconds);

}  // namespace mnist_ddp::distributed
