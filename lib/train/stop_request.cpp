// lib/train/stop_request.cpp — async-signal-safe flag setting.
#include "train/stop_request.hpp"

#include <csignal>

namespace mnist_ddp::train {
namespace {

// sig_atomic_t: what a handler may write; volatile: the loop must not cache it.
volatile std::sig_atomic_t received_signal = 0;

extern "C" void remember_signal(int signal) { received_signal = signal; }

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // system calls in progress (file writes) carry on
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

bool stop_requested() { return received_signal != 0; }

}  // namespace mnist_ddp::train
