// tests/mpi/test_agreed_failure.cpp — a failure on one rank ends every rank with its exit code.
#include <doctest/doctest.h>

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

}  // namespace
}  // namespace mnist_ddp::distributed
