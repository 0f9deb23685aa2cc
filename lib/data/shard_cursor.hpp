// lib/data/shard_cursor.hpp — provides: ShardCursor, the batches' sample indices read from the
// epoch's shard at a position kept on the training device, for steps that replay a CUDA graph.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace mnist_ddp::data {

/// Note [Indices at a device-side position]. A captured step (Note [The step as one CUDA graph])
/// replays the kernels of its capture with the tensors of its capture: an index narrowed on the
/// host there would be the capture's batch on every replay. So the epoch's shard is uploaded
/// once into a buffer of the cursor's own (the same memory every epoch), and each batch's
/// indices are gathered at positions that are themselves a tensor on the device, which the batch
/// advances. The host writes the positions only where the order starts (an epoch, a resume).
class ShardCursor {
 public:
  /// Batches of `batch_size` indices from shards of at most `capacity` indices, on `device`.
  ShardCursor(std::int64_t batch_size, std::int64_t capacity, c10::Device device);

  /// Copies this epoch's `shard` (int64 sample indices, at most `capacity`) into the cursor's
  /// buffer and puts the position at its start.
  void start(const at::Tensor& shard);

  /// The `batch_size` indices at the position, which then moves past them: device work alone
  /// (no value read or written by the host). The caller keeps to whole batches of the shard.
  at::Tensor next();

 private:
  std::int64_t batch_size_;
  at::Tensor shard_;        // (capacity) int64
  at::Tensor first_batch_;  // (batch_size) 0, 1, ...: the first batch's positions in shard_
  at::Tensor next_batch_;   // (batch_size) int64: the next batch's positions in shard_
};

}  // namespace mnist_ddp::data
