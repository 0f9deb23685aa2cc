// tests/mpi/test_agreed_plan.cpp — what the ranks agree on before the first collective that
// depends on it: every rank's capability gathered in rank order, the plan that follows on every
// rank with every rank's placement, and options that differ between ranks refused by the ranks
// that differ.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/device_plan.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

TEST_CASE("World: one node, identified by its first rank; the thread level the CUDA path needs") {
  const World& world = testing::test_world();
  CHECK(world.node_id() == 0);  // every rank of these tests runs on one machine
  CHECK(world.thread_level() >= MPI_THREAD_SERIALIZED);
}

TEST_CASE("gather_capabilities returns every rank's record in rank order") {
  const World& world = testing::test_world();
  config::TrainConfig config;
  config.device = config::Device::kCpu;
  config.threads = world.rank() + 1;
  RankCapability mine = probe_capability(world, config::device_request(config));
  CHECK(mine.cuda_missing == "--device cpu");
  CHECK(mine.cores == usable_cores());
  mine.gpu = world.rank();
  mine.gpu_text = std::string(150, 'a' + static_cast<char>(world.rank()));  // long texts travel
  const std::vector<RankCapability> all = gather_capabilities(world, mine);
  REQUIRE(all.size() == static_cast<size_t>(world.size()));
  for (int rank = 0; rank < world.size(); ++rank) {
    CAPTURE(rank);
    CHECK(all[rank].local_rank == rank);
    CHECK(all[rank].gpu == rank);
    CHECK(all[rank].gpu_text == std::string(150, 'a' + static_cast<char>(rank)));
    CHECK(all[rank].host == world.host());
    CHECK(all[rank].node == 0);
    CHECK(all[rank].cuda_missing == "--device cpu");
    CHECK(all[rank].threads == rank + 1);
  }
}

TEST_CASE("plan_devices: every rank's placement in rank order; --threads 0 shares the cores") {
  const World& world = testing::test_world();
  config::TrainConfig config;
  config.device = config::Device::kCpu;
  const std::vector<RankPlacement> layout =
      plan_devices(config::device_request(config), world).layout;
  const int node_cores = static_cast<int>(std::thread::hardware_concurrency());
  REQUIRE(layout.size() == static_cast<size_t>(world.size()));
  for (int rank = 0; rank < world.size(); ++rank) {
    CAPTURE(rank);
    CHECK(layout[rank].rank == rank);
    CHECK(layout[rank].host == world.host());  // one machine in these tests
    CHECK(layout[rank].local_rank == rank);
    CHECK(layout[rank].device == "cpu");
    CHECK(layout[rank].threads == std::max(1, node_cores / world.size()));
    CHECK(layout[rank].cores >= 1);
  }
  CHECK(world.node_count() == 1);
  CHECK(world.local_size() == world.size());
}

TEST_CASE("plan_devices: the CPU and MPI on every rank here, with no note") {
  const World& world = testing::test_world();
  config::TrainConfig config;
  const DevicePlan plan = plan_devices(config::device_request(config), world);
  if (plan.on_cuda()) {
    MESSAGE("a GPU is present: the CPU plan cannot be checked here; skipped");
    return;
  }
  CHECK(plan.backend == config::Backend::kMpi);
  CHECK(plan.layout[world.rank()].device == "cpu");
  CHECK(plan.note.empty());
  config.device = config::Device::kCuda;
  CHECK_THROWS_WITH_AS(plan_devices(config::device_request(config), world),
                       doctest::Contains("--device cuda: "), UsageError);
}

TEST_CASE("check_same_options: the last rank's other batch size is refused there, by name") {
  const World& world = testing::test_world();
  config::TrainConfig config;
  config.data_dir = "/node-local/" + std::to_string(world.rank());  // may differ
  CHECK_NOTHROW(check_same_options(world, config));
  if (world.rank() == world.size() - 1 && world.size() > 1) config.batch_size = 32;
  if (world.rank() == world.size() - 1 && world.size() > 1) {
    CHECK_THROWS_WITH_AS(check_same_options(world, config),
                         "--batch-size is 32 per rank on this rank but 64 per rank on rank 0: "
                         "every rank must run with the same options (check the MNIST_DDP_* "
                         "variables and --config files each rank sees)",
                         UsageError);
  } else {
    CHECK_NOTHROW(check_same_options(world, config));
  }
}

TEST_CASE("check_same_options: a learning rate that differs in its 8th digit is refused") {
  const World& world = testing::test_world();
  config::TrainConfig config;
  const bool differs = world.rank() == world.size() - 1 && world.size() > 1;
  if (differs) config.lr = 0.01000001;
  if (differs) {
    CHECK_THROWS_WITH_AS(check_same_options(world, config),
                         doctest::Contains("--lr is 0.01000001 on this rank but 0.01 on rank 0"),
                         UsageError);
  } else {
    CHECK_NOTHROW(check_same_options(world, config));
  }
}

}  // namespace
}  // namespace mnist_ddp::distributed
