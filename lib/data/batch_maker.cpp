// lib/data/batch_maker.cpp — gather, convert and normalize a batch in three tensor operations.
#include "data/batch_maker.hpp"

#include <ATen/ATen.h>

namespace mnist_ddp::data {

BatchMaker::BatchMaker(const Dataset& dataset, double mean, double std)
    : dataset_(dataset), scale_(1.0 / (255.0 * std)), shift_(-mean / std) {}

Batch BatchMaker::make(const at::Tensor& indices) const {
  at::Tensor pixels = dataset_.images.index_select(0, indices);  // (B, 28, 28) uint8
  at::Tensor inputs = pixels.to(at::kFloat).mul_(scale_).add_(shift_).unsqueeze_(1);
  return Batch{inputs, dataset_.labels.index_select(0, indices)};
}

}  // namespace mnist_ddp::data
