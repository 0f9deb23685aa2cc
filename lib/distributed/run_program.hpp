// lib/distributed/run_program.hpp — provides: run_program, every program's outermost error path.
#pragma once

#include <functional>

#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Starts the World and returns `program`'s exit code, or an AgreedFailure's. Any other error,
/// the World's start-up included, is reported and ends every rank (abort_job).
int run_program(int* argc, char*** argv, const std::function<int(World&)>& program);

}  // namespace mnist_ddp::distributed
