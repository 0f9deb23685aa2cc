// lib/distributed/poll_wait.cpp — the back-off of polling waits.
#include "distributed/poll_wait.hpp"

#include <sched.h>

#include <thread>

namespace mnist_ddp::distributed {

double seconds_since(PollClock::time_point start) {
  return std::chrono::duration<double>(PollClock::now() - start).count();
}

void pause_after(double waited_seconds) {
  if (waited_seconds < 1e-3) return;
  if (waited_seconds < 0.1) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace mnist_ddp::distributed
