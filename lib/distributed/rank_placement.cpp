// lib/distributed/rank_placement.cpp — one MPI_Allgather of fixed-size records.
#include "distributed/rank_placement.hpp"

#include <array>
#include <cstring>
#include <thread>

#include <sched.h>

#include "distributed/mpi_check.hpp"
#include "distributed/rank_capability.hpp"

namespace mnist_ddp::distributed {
namespace {

/// Fixed-size and trivially copyable, so it travels as bytes.
struct PlacementRecord {
  std::array<char, 128> host{};
  std::array<char, 128> device{};
  std::array<char, 128> nccl_host{};
  int local_rank = 0;
  int threads = 1;
  int cores = 1;
};

void copy_truncated(std::array<char, 128>& into, const std::string& text) {
  std::strncpy(into.data(), text.c_str(), into.size() - 1);
}

}  // namespace

int usable_cores() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return CPU_COUNT(&mask);
  return static_cast<int>(std::thread::hardware_concurrency());
}

std::vector<RankPlacement> gather_layout(const World& world, const std::string& device,
                                         int threads) {
  PlacementRecord mine;
  copy_truncated(mine.host, world.host());
  copy_truncated(mine.device, device);
  copy_truncated(mine.nccl_host, nccl_host_id());
  mine.local_rank = world.local_rank();
  mine.threads = threads;
  mine.cores = usable_cores();

  std::vector<PlacementRecord> all(world.size());
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE,
                                world.comm(), &request));
  world.wait(request, "gathering the rank layout");
  std::vector<RankPlacement> layout;
  for (int rank = 0; rank < world.size(); ++rank) {
    const PlacementRecord& r = all[rank];
    layout.push_back({rank, r.host.data(), r.local_rank, r.device.data(), r.threads, r.cores,
                      r.nccl_host.data()});
  }
  return layout;
}

}  // namespace mnist_ddp::distributed
