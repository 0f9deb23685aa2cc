// lib/distributed/poll_wait.hpp — provides: PollClock, pause_after, poll_until, stall_message.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "common/process_clock.hpp"

namespace mnist_ddp::distributed {

using PollClock = std::chrono::steady_clock;

/// Between polls: spin first (a step's allreduce is done within microseconds), then yield the
/// core (ranks may outnumber cores), then sleep (a long wait should cost nothing).
void pause_after(double waited_seconds);

/// False when `timeout_seconds` passed before `done_yet` returned true.
bool poll_until(const std::function<bool()>& done_yet, double timeout_seconds);

/// The one text of a wait past --comm-timeout: "still waiting after N s: <cause>; the job ends
/// (raise --comm-timeout ...)".
std::string stall_message(double waited_seconds, const std::string& cause);

}  // namespace mnist_ddp::distributed
