// lib/run/training_run.hpp — provides: run_training (the training command), install_stop_handlers.
#pragma once

#include "config/train_config.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::run {

/// Trains as `config` says on every rank of `world`; returns the exit code (agreed phases end
/// every rank alike, Note [One agreement]).
int run_training(const distributed::World& world, const config::TrainConfig& config);

/// From now on SIGTERM and SIGUSR1 only set a flag; the trainer polls it between steps.
void install_stop_handlers();

}  // namespace mnist_ddp::run
