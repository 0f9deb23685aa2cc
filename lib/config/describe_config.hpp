// lib/config/describe_config.hpp — provides: describe_config, every setting of a run as
// (option name, value) text pairs, for the start-up banner and the run report.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/train_config.hpp"

namespace mnist_ddp::config {

/// Every field of `config` under its command-line name, in --help order; "-" for an empty path.
std::vector<std::pair<std::string, std::string>> describe_config(const TrainConfig& config);

}  // namespace mnist_ddp::config
