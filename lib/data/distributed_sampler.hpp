// lib/data/distributed_sampler.hpp — provides: DistributedSampler, this rank's sample indices per
// epoch with the semantics of PyTorch's torch.utils.data.DistributedSampler.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::data {

/// Splits a data set of `dataset_size` samples across `world_size` ranks, as PyTorch does:
/// - the epoch's order is a permutation seeded by (seed, epoch) alone, so it does not depend on
///   the world size and changes every epoch (call set_epoch before each one);
/// - unless drop_last, the order is padded by wrap-around to a multiple of the world size, so
///   every rank gets the same number of samples; with drop_last the tail is dropped instead;
/// - rank r takes positions r, r + W, r + 2W, ... of the padded order.
class DistributedSampler {
 public:
  DistributedSampler(std::int64_t dataset_size, int world_size, int rank, std::int64_t seed,
                     bool shuffle = true, bool drop_last = false);

  /// Selects the order of `epoch`; the same (seed, epoch) always gives the same order.
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  std::int64_t epoch() const { return epoch_; }

  /// This rank's sample indices for the current epoch: int64, num_samples() long.
  at::Tensor indices() const { return indices_from(0); }

  /// This rank's indices for the rest of the epoch, once the first `position` positions of the
  /// padded global order have been trained on (by any world size). The samples at positions
  /// position..N-1 of the epoch's permutation are padded by wrap-around from its start and
  /// strided over this world; with the world size that reached `position` this is exactly the
  /// remainder of indices(), and with another world size no sample is skipped or repeated
  /// beyond the padding. Note [Elastic resume].
  at::Tensor indices_from(std::int64_t position) const;
  /// Samples each rank gets per epoch.
  std::int64_t num_samples() const { return num_samples_; }
  /// Samples all ranks together get per epoch (num_samples() x world size).
  std::int64_t total_size() const { return num_samples_ * world_size_; }

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

/// The permutation of 0..n-1 for (seed, epoch): Fisher-Yates over a std::mt19937_64 seeded
/// through std::seed_seq, both fully specified by the C++ standard, so every platform, compiler
/// and LibTorch version gives the same order (checkpoints resume identically anywhere).
at::Tensor epoch_permutation(std::int64_t n, std::int64_t seed, std::int64_t epoch);

}  // namespace mnist_ddp::data
