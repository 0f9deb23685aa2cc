// lib/data/batch_maker.hpp — provides: Batch and BatchMaker, which gathers a batch and normalizes
// it as a whole (no float copy of the data set): in one pass on the calling thread on the CPU,
// with three tensor operations on a GPU.
#pragma once

#include <ATen/core/Tensor.h>

#include "data/mnist_dataset.hpp"

namespace mnist_ddp::data {

struct Batch {
  at::Tensor inputs;   // (B, 1, 28, 28) float, normalized
  at::Tensor targets;  // (B) int64
};

/// Turns sample indices into normalized model inputs.
class BatchMaker {
 public:
  /// `mean` and `std` apply to pixels scaled to [0, 1], as torchvision's Normalize.
  BatchMaker(const Dataset& dataset, double mean, double std);

  /// The batch for `indices` (int64, any length up to the data set size).
  Batch make(const at::Tensor& indices) const;

 private:
  const Dataset& dataset_;
  // (pixel / 255 - mean) / std == pixel * scale_ + shift_: one multiply and one add.
  double scale_;
  double shift_;
};

}  // namespace mnist_ddp::data
