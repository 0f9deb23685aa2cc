// lib/data/shard_cursor.cpp — a shard buffer and a position on the device.
#include "data/shard_cursor.hpp"

#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"

namespace mnist_ddp::data {

ShardCursor::ShardCursor(std::int64_t batch_size, std::int64_t capacity, c10::Device device)
    : batch_size_(batch_size),
      shard_(at::zeros({capacity}, at::TensorOptions(at::kLong).device(device))),
      offsets_(at::arange(batch_size, at::TensorOptions(at::kLong).device(device))),
      position_(at::zeros({1}, at::TensorOptions(at::kLong).device(device))) {}

void ShardCursor::start(const at::Tensor& shard) {
  if (shard.dim() != 1 || shard.size(0) > shard_.size(0)) {
    throw Error(ExitCode::kFailure, "ShardCursor: a shard of " + std::to_string(shard.numel()) +
                                        " indices does not fit its buffer of " +
                                        std::to_string(shard_.size(0)));
  }
  shard_.narrow(0, 0, shard.size(0)).copy_(shard);
  position_.zero_();
}

at::Tensor ShardCursor::next() {
  const at::Tensor indices = shard_.index_select(0, offsets_ + position_);
  position_.add_(batch_size_);
  return indices;
}

}  // namespace mnist_ddp::data
