// lib/distributed/rank_placement.hpp — provides: RankPlacement and gather_layout, where every rank
// runs (host, local rank, device, threads, the cores it may use), collected in rank order; and
// usable_cores, the cores this process may run on.
#pragma once

#include <string>
#include <vector>

#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

struct RankPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;     // "cpu", later "cuda:0 (NVIDIA H100, 0000:18:00.0)"
  int threads = 1;        // intra-op threads
  int cores = 1;          // the cores its CPU binding lets it run on (usable_cores)
  std::string nccl_host;  // its NCCL_HOSTID, "" where unset (NCCL's host is then the node)
};

/// The cores this process may run on: its CPU affinity mask (what mpirun's or srun's binding
/// left it), or every core the machine has where the mask cannot be read.
int usable_cores();

/// Collective: every rank contributes its placement (and usable_cores()); every rank gets all of
/// them in rank order.
std::vector<RankPlacement> gather_layout(const World& world, const std::string& device,
                                         int threads);

}  // namespace mnist_ddp::distributed
