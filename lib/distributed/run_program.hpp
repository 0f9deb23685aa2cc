// lib/distributed/run_program.hpp — provides: run_program(argc, argv, program), the outermost
// error path of every program: the World is started inside it, so a failure in MPI's start-up
// ends the job as any other error does.
#pragma once

#include <functional>

#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Starts the World and returns `program`'s exit code. An AgreedFailure returns its code (already
/// reported); any other error, the World's own start-up included, is reported on stderr and ends
/// every rank with its exit code (abort_job), as other ranks may be waiting in a collective.
int run_program(int* argc, char*** argv, const std::function<int(World&)>& program);

}  // namespace mnist_ddp::distributed
