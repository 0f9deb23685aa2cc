// lib/distributed/poll_wait.cpp — the back-off of polling waits, and the polling loop.
#include "distributed/poll_wait.hpp"

#include <sched.h>

#include <cstdio>
#include <thread>

namespace mnist_ddp::distributed {
namespace {

/// Between polls: spin first (a step's allreduce is done within microseconds), then yield the
/// core (ranks may outnumber cores), then sleep (a long wait should cost nothing).
void pause_after(double waited_seconds) {
  if (waited_seconds < 1e-3) return;
  if (waited_seconds < 0.1) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

bool poll_until(const std::function<bool()>& done_yet, double timeout_seconds) {
  const PollClock::time_point start = PollClock::now();
  while (!done_yet()) {
    const double waited = seconds_since(start);
    if (waited > timeout_seconds) return false;
    pause_after(waited);
  }
  return true;
}

std::string stall_message(double waited_seconds, const std::string& cause) {
  char waited[64];
  std::snprintf(waited, sizeof waited, "still waiting after %.0f s: ", waited_seconds);
  return waited + cause + "; the job ends (raise --comm-timeout if such waits are expected)";
}

}  // namespace mnist_ddp::distributed
