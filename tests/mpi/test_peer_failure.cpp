// tests/mpi/test_peer_failure.cpp — PeerFailureWatch on every rank: a failure announced by one rank
// ends the others' polls within seconds (Note [Set-up failure is agreed while polling]), and
// announcements never reach another communicator.
#include <doctest/doctest.h>

#include <mpi.h>

#include <optional>
#include <string>

#include "distributed/peer_failure.hpp"
#include "distributed/poll_wait.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

// Far longer than any check here may take: a poll that runs into it has missed the announcement.
constexpr double kLongTimeoutSeconds = 60;
// How soon the others must give up after a rank announced its failure.
constexpr double kPromptSeconds = 10;

/// Whether any point-to-point message arrives on `comm` within `seconds`.
bool stray_message_on(MPI_Comm comm, double seconds) {
  return poll_until(
      [comm] {
        int arrived = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &arrived, MPI_STATUS_IGNORE);
        return arrived != 0;
      },
      seconds);
}

/// The sum of every rank's `value`, over the world: a collective after the watches.
int world_sum(int value) {
  int sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, testing::test_world().comm());
  return sum;
}

TEST_CASE("a rank that fails at once ends every other rank's 60 s poll within seconds") {
  const World& world = testing::test_world();
  const int failing = world.size() - 1;
  const std::string reason = "rank " + std::to_string(failing) + " could not start its part";
  PeerFailureWatch peers(world.comm());
  if (world.rank() == failing) {
    peers.announce(reason);
    peers.announce("a second reason, never sent");
    CHECK_FALSE(peers.check());  // nobody else failed
  } else {
    const PollClock::time_point start = PollClock::now();
    const WatchedPoll outcome = poll_until([] { return false; }, kLongTimeoutSeconds, peers);
    const double elapsed = seconds_since(start);
    CAPTURE(elapsed);
    CHECK(elapsed < kPromptSeconds);
    CHECK_FALSE(outcome.done);
    // CHECK, not REQUIRE, here and below: every rank must reach the collective at the end.
    CHECK(outcome.peer_failure.has_value());
    if (outcome.peer_failure) {
      CHECK(outcome.peer_failure->rank == failing);
      CHECK(outcome.peer_failure->reason == reason);
    }

    // Heard once, kept: a later poll still sees it, unless its own operation is done first.
    const std::optional<PeerFailure> heard = peers.check();
    CHECK((heard && heard->rank == failing));
    const WatchedPoll done_first = poll_until([] { return true; }, kLongTimeoutSeconds, peers);
    CHECK(done_first.done);
    CHECK_FALSE(done_first.peer_failure);
  }
  CHECK(world_sum(1) == world.size());
}

TEST_CASE("two ranks failing at once: every other rank hears one of them, the reason cut") {
  const World& world = testing::test_world();
  // The last two ranks: with two ranks in all nobody listens, and announcing must not wait.
  const int first_failing = world.size() - 2;
  const std::string padding(2 * PeerFailureWatch::kMaxReasonBytes, 'x');
  PeerFailureWatch peers(world.comm());
  if (world.rank() >= first_failing) {
    peers.announce("rank " + std::to_string(world.rank()) + " failed " + padding);
  } else {
    const WatchedPoll outcome = poll_until([] { return false; }, kLongTimeoutSeconds, peers);
    CHECK(outcome.peer_failure.has_value());
    if (outcome.peer_failure) {
      const PeerFailure& failure = *outcome.peer_failure;
      CHECK(failure.rank >= first_failing);
      CHECK(failure.reason.size() == PeerFailureWatch::kMaxReasonBytes);
      CHECK(failure.reason.rfind("rank " + std::to_string(failure.rank) + " failed x", 0) == 0);
    }
  }
  // Each failing rank's announcement to the other, and the one each listener did not hear, stay
  // unreceived: the next test case looks for them.
}

TEST_CASE("announcements never received reach neither the world nor a later watch") {
  const World& world = testing::test_world();
  CHECK(world_sum(1) == world.size());
  CHECK_FALSE(stray_message_on(world.comm(), /*seconds=*/0.5));
  PeerFailureWatch peers(world.comm());
  const PollClock::time_point start = PollClock::now();
  const WatchedPoll outcome =
      poll_until([&] { return seconds_since(start) > 0.5; }, kLongTimeoutSeconds, peers);
  CHECK(outcome.done);
  CHECK_FALSE(outcome.peer_failure);
  CHECK(world_sum(world.rank()) == world.size() * (world.size() - 1) / 2);
}

TEST_CASE("without a failure a poll ends done or timed out, and collectives go on") {
  const World& world = testing::test_world();
  {
    PeerFailureWatch peers(world.comm());
    int polls = 0;
    const WatchedPoll finished =
        poll_until([&] { return ++polls == 3; }, kLongTimeoutSeconds, peers);
    CHECK(finished.done);
    CHECK_FALSE(finished.peer_failure);
    CHECK(polls == 3);

    const WatchedPoll unfinished =
        poll_until([] { return false; }, /*timeout_seconds=*/0.05, peers);
    CHECK_FALSE(unfinished.done);
    CHECK_FALSE(unfinished.peer_failure);
  }
  CHECK(world_sum(world.rank() + 1) == world.size() * (world.size() + 1) / 2);
  CHECK_FALSE(stray_message_on(world.comm(), /*seconds=*/0.1));
}

}  // namespace
}  // namespace mnist_ddp::distributed
