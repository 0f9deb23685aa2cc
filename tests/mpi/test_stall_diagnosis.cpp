// tests/mpi/test_stall_diagnosis.cpp — MpiWatchdog on every rank (Note [Stall diagnosis]): a wait
// that passes its timeout names the rank that did not answer or had not joined, and an answer
// that comes after the diagnosis gave up lands in memory the watchdog still owns (the sanitizer
// build sees a write anywhere else).
#include <doctest/doctest.h>

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/error.hpp"
#include "distributed/mpi_watchdog.hpp"
#include "support/late_rank.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

// Short, so that the other ranks give up on the held rank at once.
constexpr double kShortTimeoutSeconds = 0.2;

/// On every rank but `held`: the CommError of waiting for `barrier`, collective `number`, under
/// the short timeout; then releases `held` and waits for the barrier's end under a long one
/// (answering the queries of ranks still diagnosing).
std::string stall_message(MpiWatchdog& watchdog, MPI_Request& barrier, std::int64_t number,
                          int held) {
  std::string message;
  try {
    watchdog.wait(barrier, number, "the test's barrier");
  } catch (const CommError& e) {
    message = e.what();
  }
  testing::release(held);
  watchdog.set_timeout(testing::kCommTimeoutSeconds);
  watchdog.wait(barrier, number, "the test's barrier");
  watchdog.set_timeout(kShortTimeoutSeconds);
  return message;
}

TEST_CASE("a rank that answers after a diagnosis gave up is asked again by the next one") {
  const World& world = testing::test_world();
  const int held = world.size() - 1;
  const std::string waits_for = "waits for rank(s) " + std::to_string(held) + "@" + world.host();
  MpiWatchdog watchdog(world.comm(), kShortTimeoutSeconds);

  // One barrier that the held rank joins only once `hold` returns; every other rank's watchdog
  // gives up on it first and names it, followed by `expected`.
  const auto barrier_round = [&](const std::function<bool()>& hold, const std::string& expected) {
    MPI_Request barrier = MPI_REQUEST_NULL;
    if (world.rank() == held) {
      CHECK(hold());
      MPI_Ibarrier(world.comm(), &barrier);
      watchdog.wait(barrier, watchdog.started(), "the test's barrier");
    } else {
      MPI_Ibarrier(world.comm(), &barrier);
      const std::string message = stall_message(watchdog, barrier, watchdog.started(), held);
      CAPTURE(message);
      CHECK(message.find(waits_for + expected) != std::string::npos);
    }
  };
  // The held rank answers nothing until every other rank's diagnosis gave up on it.
  barrier_round([&] { return testing::hold_until_released(held, testing::kCommTimeoutSeconds); },
                " not responding (stalled, dead or busy); the job ends");
  // Then it answers while it stays out of the next barrier: its late answers to the first
  // queries arrive now, and the next diagnosis reports where it stands, at collective #1.
  barrier_round(
      [&] {
        return testing::hold_until_released(
            held, testing::kCommTimeoutSeconds,
            [&](MPI_Request& release) { return watchdog.test(release); });
      },
      " (at #1) had not joined; the job ends");
}

}  // namespace
}  // namespace mnist_ddp::distributed
