// tests/support/synthetic_dataset.hpp — provides: synthetic_dataset, a reproducible random MNIST-
// shaped data set, so distributed tests need no files.
#pragma once

#include <cstdint>

#include "data/mnist_dataset.hpp"

namespace mnist_ddp::testing {

/// `size` random 28x28 uint8 images with random labels 0..9; the same seed gives the same set
/// on every rank.
data::Dataset synthetic_dataset(std::int64_t size, std::uint64_t seed);

}  // namespace mnist_ddp::testing
