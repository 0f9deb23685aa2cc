// lib/data/batch_maker.hpp — provides: Batch and BatchMaker, which makes a batch of normalized
// inputs: gathered and normalized in one pass on the calling thread on the CPU, gathered from a
// normalized copy of the data set on a GPU (normalized_images).
#pragma once

#include <ATen/core/Tensor.h>

#include "data/mnist_dataset.hpp"

namespace mnist_ddp::data {

struct Batch {
  at::Tensor inputs;   // (B, 1, 28, 28) float, normalized
  at::Tensor targets;  // (B) int64
};

/// `images` ((N, 28, 28) uint8) as normalized float model inputs, (N, 1, 28, 28): pixel / 255,
/// less `mean`, over `std`, rounded as BatchMaker's CPU batches are.
at::Tensor normalized_images(const at::Tensor& images, double mean, double std);

/// Turns sample indices into normalized model inputs.
class BatchMaker {
 public:
  /// `mean` and `std` apply to pixels scaled to [0, 1], as torchvision's Normalize. Where
  /// `dataset` is on a GPU, keeps a normalized copy of its images there (Note [A normalized copy
  /// on the GPU]).
  BatchMaker(const Dataset& dataset, double mean, double std);

  /// The batch for `indices` (int64, any length up to the data set size).
  Batch make(const at::Tensor& indices) const;

 private:
  const Dataset& dataset_;
  // (pixel / 255 - mean) / std == pixel * scale_ + shift_: one multiply and one add.
  double scale_;
  double shift_;
  at::Tensor normalized_;  // on a GPU: normalized_images of the data set; else undefined
};

}  // namespace mnist_ddp::data
