// lib/data/distributed_sampler.cpp — permutation, padding and striding of the epoch's order.
#include "data/distributed_sampler.hpp"

#include <random>

#include <ATen/ATen.h>

namespace mnist_ddp::data {
namespace {

/// Uniform in [0, bound) by rejection: no modulo bias, no implementation-defined distribution.
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
  std::uint64_t draw = 0;
  do {
    draw = engine();
  } while (draw >= limit);
  return draw % bound;
}

}  // namespace

at::Tensor epoch_permutation(std::int64_t n, std::int64_t seed, std::int64_t epoch) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(epoch),
                         static_cast<std::uint32_t>(epoch >> 32)};
  std::mt19937_64 engine(sequence);
  at::Tensor order = at::arange(n, at::kLong);
  auto* index = order.data_ptr<std::int64_t>();
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j =
        static_cast<std::int64_t>(uniform_below(engine, static_cast<std::uint64_t>(i) + 1));
    std::swap(index[i], index[j]);
  }
  return order;
}

DistributedSampler::DistributedSampler(std::int64_t dataset_size, int world_size, int rank,
                                       std::int64_t seed, bool shuffle, bool drop_last)
    : dataset_size_(dataset_size),
      world_size_(world_size),
      rank_(rank),
      seed_(seed),
      shuffle_(shuffle),
      drop_last_(drop_last),
      // Same arithmetic as PyTorch: drop_last rounds down, otherwise up.
      num_samples_(drop_last ? dataset_size / world_size
                             : (dataset_size + world_size - 1) / world_size) {
  TORCH_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, "rank ", rank,
              " is outside a world of size ", world_size);
  TORCH_CHECK(dataset_size >= 1, "cannot sample from an empty data set");
}

// Note [Elastic resume]: an epoch is one permutation, the same for every world size, and a step of
// W ranks consumes its next W x batch positions, so a checkpoint records only the global position
// reached and any world size resumes there; only the wrap-around padding is computed afresh.
at::Tensor DistributedSampler::indices_from(std::int64_t position) const {
  TORCH_CHECK(position >= 0, "sample position ", position, " is negative");
  const at::Tensor order = shuffle_ ? epoch_permutation(dataset_size_, seed_, epoch_)
                                    : at::arange(dataset_size_, at::kLong);
  const std::int64_t start = std::min(position, dataset_size_);
  const std::int64_t remaining = dataset_size_ - start;
  const std::int64_t total = drop_last_ ? remaining / world_size_ * world_size_
                                        : (remaining + world_size_ - 1) / world_size_ * world_size_;
  at::Tensor rest = order.narrow(0, start, remaining);
  if (total > remaining) {
    // Pad by wrap-around as PyTorch does, repeating the order when ranks outnumber samples.
    const std::int64_t repeats = (total - remaining + dataset_size_ - 1) / dataset_size_;
    rest = at::cat({rest, order.repeat({repeats})});
  }
  return rest.narrow(0, 0, total).slice(0, rank_, total, world_size_).contiguous();
}

}  // namespace mnist_ddp::data
