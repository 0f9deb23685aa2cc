// lib/data/mnist_dataset.hpp — provides: Dataset (all images as one uint8 tensor, labels as
// int64) and load_mnist, which finds, reads and cross-checks the image and label files.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::data {

enum class Split { kTrain, kTest };

/// One split of MNIST in memory, undecoded: 28x28 uint8 pixels, so 60,000 images take 47 MB.
struct Dataset {
  at::Tensor images;  // (N, 28, 28) uint8
  at::Tensor labels;  // (N) int64, each in [0, 9]
  std::int64_t size() const { return labels.size(0); }
  /// The same data on `device` (uploaded once; batches are then gathered there).
  Dataset to(const at::Device& device) const { return {images.to(device), labels.to(device)}; }
};

constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kNumClasses = 10;

/// "200 images (CRC-32 1a2b3c4d)": the size of `set` and the CRC-32 of its images' and labels'
/// bytes, equal for equal data on any machine. `set` must be in host memory.
std::string fingerprint(const Dataset& set);

/// Loads train-{images-idx3,labels-idx1}-ubyte or t10k-... from `dir`, each raw or with .gz.
/// Throws DataError naming the file and the problem: missing folder or file, malformed IDX,
/// images that are not 28x28, image/label count mismatch, label out of range.
Dataset load_mnist(const std::string& dir, Split split);

}  // namespace mnist_ddp::data
