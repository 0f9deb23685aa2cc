// lib/data/mnist_dataset.hpp — provides: Dataset, load_mnist, fingerprint.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::data {

enum class Split { kTrain, kTest };

/// One split of MNIST in memory, as uint8 pixels.
struct Dataset {
  at::Tensor images;  // (N, 28, 28) uint8
  at::Tensor labels;  // (N) int64, each in [0, 9]
  std::int64_t size() const { return labels.size(0); }
  /// The same data on `device`, uploaded once; batches are gathered there.
  Dataset to(const at::Device& device) const { return {images.to(device), labels.to(device)}; }
};

constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kNumClasses = 10;

/// "200 images (CRC-32 1a2b3c4d)", equal for equal data anywhere. `set` must be in host memory.
std::string fingerprint(const Dataset& set);

/// Loads `split` from `dir`, each file raw or .gz; DataError names the file and the problem.
Dataset load_mnist(const std::string& dir, Split split);

}  // namespace mnist_ddp::data
