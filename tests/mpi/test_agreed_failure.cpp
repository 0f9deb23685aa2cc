// tests/mpi/test_agreed_failure.cpp — a failure on one rank ends every rank with its exit code.
#include <doctest/doctest.h>

#include "common/error.hpp"
#include "dist/agreed_failure.hpp"
#include "mpi_test_world.hpp"

namespace mnist_ddp::dist {
namespace {

TEST_CASE("run_agreed returns normally when no rank fails") {
  int calls = 0;
  run_agreed(testing::test_world(), [&] { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("a data error on the last rank only makes every rank fail with exit code 3") {
  const World& world = testing::test_world();
  int code = 0;
  try {
    run_agreed(world, [&] {
      if (world.rank() == world.size() - 1) throw DataError("only the last rank sees bad data");
    });
  } catch (const AgreedFailure& failure) {
    code = failure.code;
  }
  CHECK(code == 3);
}

TEST_CASE("the highest exit code wins when ranks fail differently") {
  const World& world = testing::test_world();
  int code = 0;
  try {
    run_agreed(world, [&] {
      if (world.rank() == 0) throw UsageError("rank 0: usage");
      if (world.rank() == 1) throw CommError("rank 1: comm");
    });
  } catch (const AgreedFailure& failure) {
    code = failure.code;
  }
  CHECK(code == 5);
}

}  // namespace
}  // namespace mnist_ddp::dist
