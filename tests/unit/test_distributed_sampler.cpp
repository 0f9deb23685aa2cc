// tests/unit/test_distributed_sampler.cpp — property tests of DistributedSampler against the
// semantics of PyTorch's torch.utils.data.DistributedSampler, and pinned permutation values.
#include <algorithm>
#include <map>
#include <vector>

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include "data/distributed_sampler.hpp"

namespace mnist_ddp::testing {
namespace {

using data::DistributedSampler;
using data::epoch_permutation;

constexpr std::int64_t kSeed = 1234;

/// A data set of n samples split over `world` ranks.
struct Setup {
  std::int64_t n;  // data set size
  int world;       // ranks
};

// Divisible, not divisible, a single rank, and more ranks than samples.
const std::vector<Setup> kSetups = {{12, 3}, {10, 4}, {7, 1}, {101, 8}, {3, 5}, {1, 4}};

/// The values of an int64 tensor.
std::vector<std::int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  const auto* p = c.data_ptr<std::int64_t>();
  return {p, p + c.numel()};
}

/// Every rank's indices for `epoch`, rank by rank.
std::vector<std::vector<std::int64_t>> all_shards(Setup s, std::int64_t epoch, bool drop_last,
                                                  std::int64_t seed = kSeed) {
  std::vector<std::vector<std::int64_t>> shards;
  for (int rank = 0; rank < s.world; ++rank) {
    DistributedSampler sampler(s.n, s.world, rank, seed, /*shuffle=*/true, drop_last);
    sampler.set_epoch(epoch);
    shards.push_back(to_vector(sampler.indices()));
  }
  return shards;
}

/// How often each index occurs across all shards.
std::map<std::int64_t, std::int64_t> counts(const std::vector<std::vector<std::int64_t>>& shards) {
  std::map<std::int64_t, std::int64_t> seen;
  for (const auto& shard : shards) {
    for (std::int64_t i : shard) ++seen[i];
  }
  return seen;
}

/// a / b rounded up, for positive a and b.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_SUITE("DistributedSampler") {
  TEST_CASE("padded shards have equal length and cover every index") {
    for (Setup s : kSetups) {
      CAPTURE(s.n);
      CAPTURE(s.world);
      const std::int64_t per_rank = ceil_div(s.n, s.world);
      const std::int64_t total = per_rank * s.world;
      DistributedSampler probe(s.n, s.world, /*rank=*/0, kSeed);
      CHECK(probe.num_samples() == per_rank);
      CHECK(probe.total_size() == total);

      const auto shards = all_shards(s, /*epoch=*/0, /*drop_last=*/false);
      for (const auto& shard : shards) CHECK(static_cast<std::int64_t>(shard.size()) == per_rank);

      const auto seen = counts(shards);
      REQUIRE(static_cast<std::int64_t>(seen.size()) == s.n);  // every index, nothing else
      CHECK(seen.begin()->first == 0);
      CHECK(seen.rbegin()->first == s.n - 1);
      // The padding (total - n samples) repeats the order from its start, as PyTorch does.
      const auto order = to_vector(epoch_permutation(s.n, kSeed, /*epoch=*/0));
      for (std::int64_t p = 0; p < s.n; ++p) {
        // Order position p is used at positions p, p + n, p + 2n, ... below total.
        const std::int64_t repeats = ceil_div(total - p, s.n);
        CHECK(seen.at(order[p]) == repeats);
      }
      if (s.n % s.world == 0) {
        for (const auto& [index, times] : seen) CHECK(times == 1);  // disjoint
      }
    }
  }

  TEST_CASE("drop_last gives floor(n / world) samples per rank and no repeats") {
    for (Setup s : kSetups) {
      CAPTURE(s.n);
      CAPTURE(s.world);
      const auto shards = all_shards(s, /*epoch=*/3, /*drop_last=*/true);
      for (const auto& shard : shards) {
        CHECK(static_cast<std::int64_t>(shard.size()) == s.n / s.world);
      }
      const auto seen = counts(shards);
      CHECK(static_cast<std::int64_t>(seen.size()) == s.n / s.world * s.world);
      for (const auto& [index, times] : seen) {
        CHECK(times == 1);
        CHECK(index >= 0);
        CHECK(index < s.n);
      }
    }
  }

  TEST_CASE("interleaving the shards of any world size gives the one-rank order") {
    for (Setup s : kSetups) {
      for (bool drop_last : {false, true}) {
        CAPTURE(s.n);
        CAPTURE(s.world);
        CAPTURE(drop_last);
        const auto order = to_vector(epoch_permutation(s.n, kSeed, /*epoch=*/2));
        const auto shards = all_shards(s, /*epoch=*/2, drop_last);
        // Rank r's i-th sample sits at position i * W + r of the padded global order.
        for (int r = 0; r < s.world; ++r) {
          for (std::size_t i = 0; i < shards[r].size(); ++i) {
            const std::int64_t position = static_cast<std::int64_t>(i) * s.world + r;
            CHECK(shards[r][i] == order[position % s.n]);
          }
        }
      }
    }
  }

  TEST_CASE("the order changes with the epoch and repeats for the same seed and epoch") {
    const Setup s{100, 4};
    const auto epoch0 = all_shards(s, /*epoch=*/0, /*drop_last=*/false);
    CHECK(all_shards(s, /*epoch=*/0, /*drop_last=*/false) == epoch0);
    CHECK(all_shards(s, /*epoch=*/1, /*drop_last=*/false) != epoch0);

    DistributedSampler sampler(s.n, s.world, /*rank=*/1, kSeed);
    sampler.set_epoch(5);
    CHECK(sampler.epoch() == 5);
    const auto first = to_vector(sampler.indices());
    sampler.set_epoch(6);
    CHECK(to_vector(sampler.indices()) != first);
    sampler.set_epoch(5);
    CHECK(to_vector(sampler.indices()) == first);
  }

  TEST_CASE("a different seed gives a different order") {
    const Setup s{100, 2};
    const auto base = all_shards(s, /*epoch=*/0, /*drop_last=*/false, /*seed=*/1);
    CHECK(all_shards(s, /*epoch=*/0, /*drop_last=*/false, /*seed=*/2) != base);
    // The high half of the seed counts too.
    CHECK(all_shards(s, /*epoch=*/0, /*drop_last=*/false, /*seed=*/1 + (std::int64_t{1} << 32)) !=
          base);
  }

  TEST_CASE("without shuffling rank r takes r, r + W, r + 2W, ...") {
    DistributedSampler sampler(/*dataset_size=*/10, /*world_size=*/4, /*rank=*/1, kSeed,
                               /*shuffle=*/false);
    CHECK(to_vector(sampler.indices()) == std::vector<std::int64_t>{1, 5, 9});
  }

  TEST_CASE("epoch_permutation is a permutation of 0..n-1") {
    for (std::int64_t n : {1, 2, 10, 1000}) {
      for (std::int64_t epoch : {0, 1, 7}) {
        CAPTURE(n);
        CAPTURE(epoch);
        const at::Tensor order = epoch_permutation(n, kSeed, epoch);
        CHECK(order.dtype() == at::kLong);
        CHECK(at::equal(std::get<0>(order.sort()), at::arange(n, at::kLong)));
      }
    }
  }

  TEST_CASE("epoch_permutation(10, seed 1, epoch 0) is pinned") {
    // Recorded once from this implementation. It only uses std::seed_seq and std::mt19937_64,
    // which the C++ standard fully specifies, so every platform, compiler and LibTorch version
    // must give this order; a change here breaks resuming a run elsewhere.
    const std::vector<std::int64_t> expected = {2, 1, 8, 9, 6, 7, 3, 5, 0, 4};
    CHECK(to_vector(epoch_permutation(10, /*seed=*/1, /*epoch=*/0)) == expected);
  }
}

}  // namespace mnist_ddp::testing
