// tests/support/mpi_test_world.hpp — provides: test_world(), the MPI world the MPI test runner
// started, for test cases that need ranks, and the communication timeout those tests use.
#pragma once

#include "distributed/world.hpp"

namespace mnist_ddp::testing {

/// The timeout the MPI tests give their communicators: far above any collective of a test, even
/// with ranks oversubscribed on two cores, so only a hang reaches it.
inline constexpr double kCommTimeoutSeconds = 60;

/// The world of this test process; valid while the tests run.
const distributed::World& test_world();

}  // namespace mnist_ddp::testing
