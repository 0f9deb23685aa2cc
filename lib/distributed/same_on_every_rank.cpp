// lib/distributed/same_on_every_rank.cpp — rank 0's options, broadcast, and a comparison.
#include "distributed/same_on_every_rank.hpp"

#include <sstream>

#include "common/error.hpp"
#include "config/options.hpp"
#include "distributed/agreement.hpp"

namespace mnist_ddp::distributed {

void check_same_options(const World& world, const config::TrainConfig& config) {
  std::string mine;
  for (const auto& [name, value] : config::describe_config(config, config::Scope::kJob)) {
    mine += name + '\n' + value + '\n';
  }
  const std::string rank0 = broadcast_bytes(world, mine);
  if (rank0 == mine) return;
  // Both lists come from the same describe_config: the same names in the same order.
  std::istringstream here(mine);
  std::istringstream there(rank0);
  std::string name, value, name0, value0;
  while (std::getline(here, name) && std::getline(here, value) && std::getline(there, name0) &&
         std::getline(there, value0)) {
    if (name == name0 && value == value0) continue;
    throw UsageError("--" + name + " is " + value + " on this rank but " + value0 +
                     " on rank 0: every rank must run with the same options (check the "
                     "MNIST_DDP_* variables and --config files each rank sees)");
  }
  throw UsageError(
      "the options of this rank differ from rank 0's: is the same mnist_ddp running on every "
      "rank?");
}

}  // namespace mnist_ddp::distributed
