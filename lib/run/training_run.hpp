// lib/run/training_run.hpp — provides: run_training, the program's training command.
#pragma once

#include "config/train_config.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::run {

/// Trains as `config` says on every rank of `world`; returns the exit code (agreed phases end
/// every rank alike, Note [One agreement]).
int run_training(const distributed::World& world, const config::TrainConfig& config);

}  // namespace mnist_ddp::run
