// lib/train/data_sets.hpp — provides: DataSets, load_data_sets (agreed, on the training device).
#pragma once

#include <functional>

#include <c10/core/Device.h>

#include "config/train_config.hpp"
#include "data/mnist_dataset.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::train {

/// The training and test sets, as uint8 on the training device (batches are gathered there).
struct DataSets {
  data::Dataset train;
  data::Dataset test;
};

/// Collective, agreed: both splits of --data-dir, the same on every rank (shards and step counts
/// follow from them), at least one training image per rank, then moved to `device`.
/// `while_loading` runs inside the agreed load (fault injection).
DataSets load_data_sets(const distributed::World& world, const config::TrainConfig& config,
                        c10::Device device, const std::function<void()>& while_loading);

}  // namespace mnist_ddp::train
