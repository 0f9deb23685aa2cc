// tests/support/mpi_test_world.hpp — provides: test_world(), the MPI world the MPI test runner
// started, for test cases that need ranks.
#pragma once

#include "distributed/world.hpp"

namespace mnist_ddp::testing {

/// The world of this test process; valid while the tests run.
const distributed::World& test_world();

}  // namespace mnist_ddp::testing
