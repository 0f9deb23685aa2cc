// tests/mpi/test_agreed_failure.cpp — a failure on one rank ends every rank with its exit code.
#include <doctest/doctest.h>

#include <string>

#include "common/error.hpp"
#include "distributed/agreed_failure.hpp"
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

TEST_CASE("throw_unless_all_succeeded: the failed rank keeps its error, the others its exit code") {
  const World& world = testing::test_world();
  const int last = world.size() - 1;
  int steps = 0;
  try {
    throw_unless_all_succeeded(world.watchdog(), "a set-up step", [&] {
      ++steps;
      if (world.rank() == last) throw Error(ExitCode::kFailure, "cudaMalloc failed");
    });
    FAIL("a failed step was not agreed on");
  } catch (const Error& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK((e.code() == ExitCode::kFailure));
    CHECK(message == (world.rank() == last ? "cudaMalloc failed"
                                           : "a set-up step failed on rank " +
                                                 std::to_string(last) + " (its error says why)"));
  }
  CHECK(steps == 1);
  throw_unless_all_succeeded(world.watchdog(), "a step that succeeds", [] {});
}

}  // namespace
}  // namespace mnist_ddp::distributed
