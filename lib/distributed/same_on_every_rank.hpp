// lib/distributed/same_on_every_rank.hpp — provides: text_of_rank0 and check_same_options, which
// refuse a job whose ranks were given different options before those options shape a collective
// (Note [One plan for every rank]).
#pragma once

#include <string>

#include "config/train_config.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Collective: rank 0's `text` on every rank (its length travels first); other ranks' argument is
/// only what they compare it with.
std::string text_of_rank0(const World& world, const std::string& text);

/// Collective: throws UsageError on a rank whose options differ from rank 0's, naming the first
/// such option and both values; the other ranks return. Options come from each rank's command
/// line, environment and --config file, and nearly every one decides how many collectives a rank
/// calls (steps, evaluations, checkpoints, log windows) or their sizes (model, batch, buckets), so
/// ranks that differ would hang or mix up data. --data-dir alone may differ: each node may hold
/// its copy elsewhere (the data sets are compared once loaded). Run it inside run_agreed.
void check_same_options(const World& world, const config::TrainConfig& config);

}  // namespace mnist_ddp::distributed
