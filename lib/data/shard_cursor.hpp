// lib/data/shard_cursor.hpp — provides: ShardCursor, batch indices at a device-side position.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace mnist_ddp::data {

/// Note [Indices at a device-side position]: a replayed graph (Note [The step as one CUDA graph])
/// reuses its capture's tensors, so batches gather a fixed shard buffer at positions that a device
/// tensor holds; the host writes them only where the order starts (an epoch, a resume).
class ShardCursor {
 public:
  /// Batches of `batch_size` indices from shards of at most `capacity` indices, on `device`.
  ShardCursor(std::int64_t batch_size, std::int64_t capacity, c10::Device device);

  /// Copies this epoch's `shard` (int64, at most `capacity`) in and rewinds the position.
  void start(const at::Tensor& shard);

  /// The next `batch_size` indices, in device work alone. The caller keeps to whole batches.
  at::Tensor next();

 private:
  std::int64_t batch_size_;
  at::Tensor shard_;        // (capacity) int64
  at::Tensor first_batch_;  // (batch_size) 0, 1, ...: the first batch's positions in shard_
  at::Tensor next_batch_;   // (batch_size) int64: the next batch's positions in shard_
};

}  // namespace mnist_ddp::data
