// tests/mpi/test_agreed_failure.cpp — Note [One agreement]: a failure on one rank ends every rank
// with its exit code and reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/mpi_communicator.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

/// The exit code all ranks agree on after running `phase`; 0 when no rank failed.
int agreed_code(const std::function<void()>& phase) {
  try {
    run_agreed(testing::test_world(), "a test phase", phase);
    return 0;
  } catch (const AgreedFailure& failure) {
    return failure.code;
  }
}

TEST_CASE("run_agreed returns normally when no rank fails") {
  int calls = 0;
  CHECK(agreed_code([&] { ++calls; }) == 0);
  CHECK(calls == 1);
}

TEST_CASE("a data error on the last rank only makes every rank fail with exit code 3") {
  const World& world = testing::test_world();
  CHECK(agreed_code([&] {
          if (world.rank() == world.size() - 1) throw DataError("only the last rank sees bad data");
        }) == 3);
}

TEST_CASE("the highest exit code wins when ranks fail differently") {
  const World& world = testing::test_world();
  CHECK(agreed_code([&] {
          if (world.rank() == 0) throw UsageError("rank 0: usage");
          if (world.rank() == 1) throw CommError("rank 1: comm");
        }) == 5);
}

TEST_CASE("an exception of another type counts as exit code 1") {
  const World& world = testing::test_world();
  CHECK(agreed_code([&] {
          if (world.rank() == 0) throw std::runtime_error("rank 0: unexpected");
        }) == 1);
}

TEST_CASE("an AgreedFailure inside a phase passes through: it was agreed already") {
  const World& world = testing::test_world();
  int outer = -1;
  CHECK(agreed_code([&] {
          outer = agreed_code([&] {
            if (world.rank() == 0) throw CheckpointError("the inner phase fails on rank 0");
          });
          throw AgreedFailure(outer);
        }) == 4);
  CHECK(outer == 4);
}

/// The verdicts of the same agreement over MPI and over a Communicator.
std::vector<Verdict> both_verdicts(int code, const std::string& reason) {
  const World& world = testing::test_world();
  MpiCommunicator comm(world.comm(), testing::kCommTimeoutSeconds);
  return {agree(world.watchdog(), code, reason, "a test agreement"), agree(comm, code, reason)};
}

TEST_CASE("agree: the highest code, the lowest rank with it and its whole reason, everywhere") {
  const World& world = testing::test_world();
  const int last = world.size() - 1;
  // Rank r fails with code 1 + r % 2; the reason is long, to travel beyond any fixed buffer.
  const std::string reason = "rank " + std::to_string(world.rank()) + std::string(5000, '!');
  for (const Verdict& verdict : both_verdicts(1 + world.rank() % 2, reason)) {
    const int highest = world.size() > 1 ? 2 : 1;
    CHECK(verdict.code == highest);
    CHECK(verdict.rank == (highest == 2 ? 1 : 0));
    CHECK(verdict.reason == "rank " + std::to_string(verdict.rank) + std::string(5000, '!'));
  }
  for (const Verdict& verdict : both_verdicts(world.rank() == last ? 5 : 0, "only the last")) {
    CHECK(verdict.failed());
    CHECK(verdict.code == 5);
    CHECK(verdict.rank == last);
    CHECK(verdict.reason == "only the last");
  }
  const World& w = world;
  MpiCommunicator comm(w.comm(), testing::kCommTimeoutSeconds);
  const std::string mine = "rank " + std::to_string(w.rank());
  for (const Verdict& kept : {agree(w.watchdog(), 3, mine, "a test agreement", false),
                              agree(comm, 3, mine, /*share_reason=*/false)}) {
    CHECK(kept.rank == 0);  // the reason stays with its rank
    CHECK(kept.reason == (w.rank() == 0 ? mine : ""));
  }
  for (const Verdict& verdict : both_verdicts(0, "nobody failed")) {
    CHECK_FALSE(verdict.failed());
    CHECK(verdict.reason.empty());
  }
}

TEST_CASE("broadcast_bytes: the root's bytes on every rank, over MPI and a Communicator") {
  const World& world = testing::test_world();
  MpiCommunicator comm(world.comm(), testing::kCommTimeoutSeconds);
  const int root = world.size() - 1;
  const std::string mine = "rank " + std::to_string(world.rank()) + std::string(world.rank(), '!');
  const std::string expected = "rank " + std::to_string(root) + std::string(root, '!');
  CHECK(broadcast_bytes(world, mine, root) == expected);
  CHECK(broadcast_bytes(comm, mine, root) == expected);
  CHECK(broadcast_bytes(world, mine) == "rank 0");
}

}  // namespace
}  // namespace mnist_ddp::distributed
