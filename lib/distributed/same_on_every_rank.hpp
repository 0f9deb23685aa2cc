// lib/distributed/same_on_every_rank.hpp — provides: check_same_options.
#pragma once

#include <string>

#include "config/train_config.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Collective: UsageError naming the first option that differs from rank 0's, as nearly every
/// option shapes the collectives. --data-dir may differ (the data are compared once loaded).
/// Run it inside run_agreed.
void check_same_options(const World& world, const config::TrainConfig& config);

}  // namespace mnist_ddp::distributed
