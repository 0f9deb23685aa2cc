// lib/distributed/poll_wait.hpp — provides: PollClock, poll_until, stall_message.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "common/process_clock.hpp"

namespace mnist_ddp::distributed {

using PollClock = std::chrono::steady_clock;

/// False when `timeout_seconds` passed before `done_yet` returned true.
bool poll_until(const std::function<bool()>& done_yet, double timeout_seconds);

/// The one text of a wait past --comm-timeout: "still waiting after N s: <cause>; ...".
std::string stall_message(double waited_seconds, const std::string& cause);

}  // namespace mnist_ddp::distributed
