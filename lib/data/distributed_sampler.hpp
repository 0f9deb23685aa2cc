// lib/data/distributed_sampler.hpp — provides: DistributedSampler (PyTorch's), epoch_permutation.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::data {

/// Splits `dataset_size` samples over `world_size` ranks as PyTorch does: an order seeded by
/// (seed, epoch) alone, padded by wrap-around (or cut); rank r takes positions r, r + W, ...
class DistributedSampler {
 public:
  DistributedSampler(std::int64_t dataset_size, int world_size, int rank, std::int64_t seed,
                     bool shuffle = true, bool drop_last = false);

  /// Selects the order of `epoch`; call before each epoch.
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }

  /// This rank's sample indices for the current epoch: int64, num_samples() long.
  at::Tensor indices() const { return indices_from(0); }

  /// This rank's rest of the epoch after `position` global positions (Note [Elastic resume]).
  at::Tensor indices_from(std::int64_t position) const;
  /// Samples each rank gets per epoch.
  std::int64_t num_samples() const { return num_samples_; }

 private:
  std::int64_t dataset_size_;
  int world_size_;
  int rank_;
  std::int64_t seed_;
  bool shuffle_;
  bool drop_last_;
  std::int64_t epoch_ = 0;
  std::int64_t num_samples_;
};

/// The permutation of 0..n-1 for (seed, epoch): Fisher-Yates over mt19937_64 and seed_seq, both
/// fully specified by the standard, so checkpoints resume identically on any platform.
at::Tensor epoch_permutation(std::int64_t n, std::int64_t seed, std::int64_t epoch);

}  // namespace mnist_ddp::data
