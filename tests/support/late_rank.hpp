// tests/support/late_rank.hpp — provides: hold_until_released and release, by which an MPI test
// keeps one rank out of communication (it answers no status query and joins no collective) until
// every other rank has finished the wait that this rank stalls.
#pragma once

#include <mpi.h>

#include <functional>

namespace mnist_ddp::testing {

/// On every rank but `held`: tells `held` that this rank is done waiting for it.
void release(int held);

/// On rank `held`: returns true once every other rank called release(held), or false after
/// `seconds`, so that a test whose other ranks never stop waiting fails instead of hanging. Each
/// release is polled with `test` (MPI_Test by default: nothing else is done meanwhile).
bool hold_until_released(int held, double seconds,
                         const std::function<bool(MPI_Request&)>& test = {});

}  // namespace mnist_ddp::testing
