// lib/train/data_sets.cpp — one agreed load, one agreed comparison with rank 0's.
#include "train/data_sets.hpp"

#include <string>

#include "common/error.hpp"
#include "distributed/agreement.hpp"

namespace mnist_ddp::train {

DataSets load_data_sets(const distributed::World& world, const config::TrainConfig& config,
                        c10::Device device, const std::function<void()>& while_loading) {
  DataSets sets;
  distributed::run_agreed(world, "loading the data", [&] {
    while_loading();
    sets.train = data::load_mnist(config.data_dir, data::Split::kTrain);
    sets.test = data::load_mnist(config.data_dir, data::Split::kTest);
    if (sets.train.size() < world.size()) {
      throw UsageError("more ranks (" + std::to_string(world.size()) + ") than training images (" +
                       std::to_string(sets.train.size()) + "); run with at most " +
                       std::to_string(sets.train.size()) + " ranks");
    }
  });
  // Ranks given other data would not meet, or would train one model on different data sets.
  distributed::run_agreed(world, "comparing the data sets", [&] {
    const std::string here = "training set " + data::fingerprint(sets.train) + ", test set " +
                             data::fingerprint(sets.test);
    const std::string rank0 = distributed::broadcast_bytes(world, here);
    if (here != rank0) {
      throw DataError(config.data_dir + " holds " + here + " on this rank but " + rank0 +
                      " on rank 0: every rank must train on the same data set");
    }
  });
  sets.train = sets.train.to(device);
  sets.test = sets.test.to(device);
  return sets;
}

}  // namespace mnist_ddp::train
