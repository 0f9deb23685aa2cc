// tests/mpi/test_rank_placement.cpp — gather_layout returns every rank's placement in rank order.
#include <doctest/doctest.h>

#include "distributed/rank_placement.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

TEST_CASE("gather_layout lists every rank in order with its host and local rank") {
  const World& world = testing::test_world();
  const auto layout = gather_layout(world, "cpu", /*threads=*/world.rank() + 1);
  REQUIRE(layout.size() == static_cast<size_t>(world.size()));
  for (int rank = 0; rank < world.size(); ++rank) {
    CHECK(layout[rank].rank == rank);
    CHECK(layout[rank].threads == rank + 1);
    CHECK(layout[rank].device == "cpu");
    CHECK(layout[rank].host == world.host());  // one machine in these tests
    CHECK(layout[rank].local_rank == rank);
    CHECK(layout[rank].cores >= 1);
  }
  CHECK(world.node_count() == 1);
  CHECK(world.local_size() == world.size());
}

}  // namespace
}  // namespace mnist_ddp::distributed
