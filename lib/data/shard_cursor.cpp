// lib/data/shard_cursor.cpp — a shard buffer and a position on the device.
#include "data/shard_cursor.hpp"

#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"

namespace mnist_ddp::data {

ShardCursor::ShardCursor(std::int64_t batch_size, std::int64_t capacity, c10::Device device)
    : batch_size_(batch_size),
      shard_(at::zeros({capacity}, at::TensorOptions(at::kLong).device(device))),
      first_batch_(at::arange(batch_size, at::TensorOptions(at::kLong).device(device))),
      next_batch_(first_batch_.clone()) {}

void ShardCursor::start(const at::Tensor& shard) {
  if (shard.dim() != 1 || shard.size(0) > shard_.size(0)) {
    throw Error(ExitCode::kFailure, "ShardCursor: a shard of " + std::to_string(shard.numel()) +
                                        " indices does not fit its buffer of " +
                                        std::to_string(shard_.size(0)));
  }
  shard_.narrow(0, 0, shard.size(0)).copy_(shard);
  next_batch_.copy_(first_batch_);
}

at::Tensor ShardCursor::next() {
  // Two kernels per batch: the gather, and the move to the next batch's positions.
  const at::Tensor indices = shard_.index_select(0, next_batch_);
  next_batch_.add_(batch_size_);
  return indices;
}

}  // namespace mnist_ddp::data
