// lib/data/batch_maker.hpp — provides: Batch, BatchMaker (indices to inputs), normalized_images.
#pragma once

#include <ATen/core/Tensor.h>

#include "data/mnist_dataset.hpp"

namespace mnist_ddp::data {

struct Batch {
  at::Tensor inputs;   // (B, 1, 28, 28) float, normalized
  at::Tensor targets;  // (B) int64
};

/// (N, 28, 28) uint8 to (N, 1, 28, 28) float, (pixel / 255 - mean) / std, rounded as CPU batches.
at::Tensor normalized_images(const at::Tensor& images, double mean, double std);

/// Turns sample indices into normalized model inputs.
class BatchMaker {
 public:
  /// `mean` and `std` of pixels in [0, 1], as torchvision's Normalize.
  BatchMaker(const Dataset& dataset, double mean, double std);

  /// The batch for `indices` (int64, any length up to the data set size).
  Batch make(const at::Tensor& indices) const;

 private:
  const Dataset& dataset_;
  // (pixel / 255 - mean) / std == pixel * scale_ + shift_
  double scale_;
  double shift_;
  at::Tensor normalized_;  // on a GPU: normalized_images of the data set; else undefined
};

}  // namespace mnist_ddp::data
