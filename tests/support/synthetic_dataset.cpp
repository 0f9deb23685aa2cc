// tests/support/synthetic_dataset.cpp — random images from a seeded generator.
#include "support/synthetic_dataset.hpp"

#include <ATen/ATen.h>
#include <torch/utils.h>

namespace mnist_ddp::testing {

data::Dataset synthetic_dataset(std::int64_t size, std::uint64_t seed) {
  torch::manual_seed(seed);
  at::Tensor images = at::randint(0, 256, {size, data::kImageSide, data::kImageSide}, at::kByte);
  at::Tensor labels = at::randint(0, data::kNumClasses, {size}, at::kLong);
  return data::Dataset{images, labels};
}

}  // namespace mnist_ddp::testing
