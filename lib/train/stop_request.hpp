// lib/train/stop_request.hpp — provides: install_stop_handlers, stop_requested (SIGTERM, SIGUSR1).
#pragma once

namespace mnist_ddp::train {

/// From now on SIGTERM and SIGUSR1 only set a flag; the trainer polls it between steps.
void install_stop_handlers();

/// Whether a stop signal arrived since install_stop_handlers.
bool stop_requested();

}  // namespace mnist_ddp::train
