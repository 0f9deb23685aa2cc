// lib/distributed/rank_placement.hpp — provides: RankPlacement and gather_layout, where every rank
// runs (host, local rank, device, threads), collected in rank order.
#pragma once

#include <string>
#include <vector>

#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

struct RankPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;  // "cpu", later "cuda:0 (NVIDIA H100, 0000:18:00.0)"
  int threads = 1;     // intra-op threads
};

/// Collective: every rank contributes its placement; every rank gets all of them in rank order.
std::vector<RankPlacement> gather_layout(const World& world, const std::string& device,
                                         int threads);

}  // namespace mnist_ddp::distributed
