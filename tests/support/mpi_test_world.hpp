// tests/support/mpi_test_world.hpp — provides: test_world(), the MPI world the MPI test runner
// started, for test cases that need ranks; the communication timeout those tests use; and
// WorldCommTimeout, which shortens the world's for one test case.
#pragma once

#include "distributed/world.hpp"

namespace mnist_ddp::testing {

/// The timeout the MPI tests give their communicators: far above any collective of a test, even
/// with ranks oversubscribed on two cores, so only a hang reaches it.
inline constexpr double kCommTimeoutSeconds = 60;

/// The world of this test process; valid while the tests run. Its waits (World::watchdog) time out
/// after kCommTimeoutSeconds.
const distributed::World& test_world();

/// While it lives, test_world()'s waits on this rank time out after `seconds`.
class WorldCommTimeout {
 public:
  explicit WorldCommTimeout(double seconds);
  ~WorldCommTimeout();
  WorldCommTimeout(const WorldCommTimeout&) = delete;
  WorldCommTimeout& operator=(const WorldCommTimeout&) = delete;
};

}  // namespace mnist_ddp::testing
