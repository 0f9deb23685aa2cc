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
    const auto first = to_vector(sampler.indices());
    // Rank 1's positions of epoch 5's order (100 samples: no padding).
    CHECK(first == to_vector(epoch_permutation(s.n, kSeed, /*epoch=*/5).slice(0, 1, s.n, s.world)));
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

namespace {

/// A run that trained `steps` steps of `batch` samples per rank on `world` ranks.
struct Progress {
  std::int64_t n;      // data set size
  int world;           // ranks that trained
  std::int64_t batch;  // samples per rank and step
  std::int64_t steps;  // steps trained this epoch

  /// Positions of the padded global order trained so far.
  std::int64_t position() const { return steps * batch * world; }
};

/// Rank `rank` of `world`'s indices for the rest of epoch 4 after `position` positions.
std::vector<std::int64_t> rest_of_epoch(std::int64_t n, int world, int rank, std::int64_t position,
                                        bool drop_last) {
  DistributedSampler sampler(n, world, rank, kSeed, /*shuffle=*/true, drop_last);
  sampler.set_epoch(4);
  return to_vector(sampler.indices_from(position));
}

/// The samples `run` trained: its ranks' first steps x batch indices, interleaved by rank, which
/// is the order the positions of the padded global order were consumed in.
std::vector<std::int64_t> consumed(const Progress& run, bool drop_last) {
  std::vector<std::vector<std::int64_t>> shards;
  for (int rank = 0; rank < run.world; ++rank) {
    shards.push_back(rest_of_epoch(run.n, run.world, rank, /*position=*/0, drop_last));
  }
  std::vector<std::int64_t> trained;
  for (std::int64_t i = 0; i < run.steps * run.batch; ++i) {
    for (int rank = 0; rank < run.world; ++rank) trained.push_back(shards[rank].at(i));
  }
  return trained;
}

// Same and changed world sizes; p = steps x batch x world stays below n in each.
const std::vector<Progress> kProgress = {
    {60, 4, 3, 2},    {101, 8, 4, 2}, {10, 3, 1, 3},  {7, 1, 2, 3},  {100, 4, 5, 0},
    {1000, 3, 7, 40}, {13, 2, 3, 2},  {103, 4, 5, 3}, {50, 2, 4, 5}, {31, 3, 2, 3},
    {100, 8, 3, 2},   {10, 1, 2, 4},  {20, 2, 3, 3},  {5, 1, 1, 4}};

/// A run from kProgress, stopped after `p` positions of epoch 4 and resumed on `resumed` ranks.
struct Resume {
  const Progress& run;
  int resumed;                        // ranks of the resumed run
  std::int64_t p;                     // run.position()
  std::vector<std::int64_t> order;    // epoch 4's permutation of all n indices
  std::vector<std::int64_t> trained;  // what `run` consumed before it stopped
};

/// Calls `check` for every run in kProgress resumed on each of several world sizes, with the
/// run captured for doctest, after checking that what the run trained is the start of the order.
template <typename F>
void for_each_resume(bool drop_last, F&& check) {
  for (const Progress& run : kProgress) {
    for (int resumed : {1, 2, 3, 4, 5, 7, 16}) {
      CAPTURE(run.n);
      CAPTURE(run.world);
      CAPTURE(run.batch);
      CAPTURE(run.steps);
      CAPTURE(resumed);
      const Resume r{run, resumed, run.position(),
                     to_vector(epoch_permutation(run.n, kSeed, /*epoch=*/4)),
                     consumed(run, drop_last)};
      // What the first run consumed is the start of the epoch's order.
      CHECK(r.trained == std::vector<std::int64_t>(r.order.begin(), r.order.begin() + r.p));
      check(r);
    }
  }
}

}  // namespace

TEST_SUITE("DistributedSampler") {
  TEST_CASE("indices_from(0) is indices()") {
    for (Setup s : kSetups) {
      for (bool shuffle : {true, false}) {
        for (bool drop_last : {false, true}) {
          for (int rank = 0; rank < s.world; ++rank) {
            CAPTURE(s.n);
            CAPTURE(s.world);
            CAPTURE(rank);
            CAPTURE(shuffle);
            CAPTURE(drop_last);
            DistributedSampler sampler(s.n, s.world, rank, kSeed, shuffle, drop_last);
            sampler.set_epoch(2);
            const at::Tensor from_start = sampler.indices_from(0);
            CHECK(from_start.dtype() == at::kLong);
            CHECK(from_start.numel() == sampler.num_samples());
            CHECK(to_vector(from_start) == to_vector(sampler.indices()));
          }
        }
      }
    }
  }

  TEST_CASE("resuming with the same world size gives exactly the rest of indices()") {
    for (const Progress& run : kProgress) {
      for (bool drop_last : {false, true}) {
        CAPTURE(run.n);
        CAPTURE(run.world);
        CAPTURE(run.batch);
        CAPTURE(run.steps);
        CAPTURE(drop_last);
        REQUIRE(run.position() < run.n);
        for (int rank = 0; rank < run.world; ++rank) {
          CAPTURE(rank);
          const auto whole = rest_of_epoch(run.n, run.world, rank, /*position=*/0, drop_last);
          REQUIRE(static_cast<std::int64_t>(whole.size()) >= run.steps * run.batch);
          const std::vector<std::int64_t> expected(whole.begin() + run.steps * run.batch,
                                                   whole.end());
          CHECK(rest_of_epoch(run.n, run.world, rank, run.position(), drop_last) == expected);
        }
      }
    }
  }

  TEST_CASE("resuming on another world size trains every sample once, plus the padding") {
    for_each_resume(/*drop_last=*/false, [](const Resume& r) {
      const auto& [run, resumed, p, order, trained] = r;
      const std::int64_t left = run.n - p;
      const std::int64_t per_rank = ceil_div(left, resumed);
      const std::int64_t padding = per_rank * resumed - left;
      std::map<std::int64_t, std::int64_t> seen;
      for (std::int64_t i : trained) ++seen[i];
      for (int rank = 0; rank < resumed; ++rank) {
        CAPTURE(rank);
        const auto shard = rest_of_epoch(run.n, resumed, rank, p, /*drop_last=*/false);
        CHECK(static_cast<std::int64_t>(shard.size()) == per_rank);
        for (std::size_t i = 0; i < shard.size(); ++i) {
          // Rank m's i-th sample is at i * M + m of the remaining order, padded from its start.
          const std::int64_t q = static_cast<std::int64_t>(i) * resumed + rank;
          CHECK(shard[i] == (q < left ? order[p + q] : order[(q - left) % run.n]));
          ++seen[shard[i]];
        }
      }
      // Each index once, and the padding repeats the first entries of the permutation.
      std::map<std::int64_t, std::int64_t> expected;
      for (std::int64_t i : order) expected[i] = 1;
      for (std::int64_t j = 0; j < padding; ++j) ++expected[order[j % run.n]];
      CHECK(seen == expected);
    });
  }

  TEST_CASE("resuming on another world size with drop_last repeats nothing") {
    for_each_resume(/*drop_last=*/true, [](const Resume& r) {
      const auto& [run, resumed, p, order, trained] = r;
      const std::int64_t per_rank = (run.n - p) / resumed;
      std::map<std::int64_t, std::int64_t> seen;
      for (std::int64_t i : trained) ++seen[i];
      for (int rank = 0; rank < resumed; ++rank) {
        const auto shard = rest_of_epoch(run.n, resumed, rank, p, /*drop_last=*/true);
        CHECK(static_cast<std::int64_t>(shard.size()) == per_rank);
        for (std::int64_t i : shard) ++seen[i];
      }
      // Exactly the order up to the dropped tail, each once.
      std::map<std::int64_t, std::int64_t> expected;
      for (std::int64_t j = 0; j < p + per_rank * resumed; ++j) expected[order[j]] = 1;
      CHECK(seen == expected);
    });
  }

  TEST_CASE("a position at or past the end of the epoch gives empty shards") {
    for (Setup s : kSetups) {
      for (bool drop_last : {false, true}) {
        for (std::int64_t position : {s.n, s.n + 1, s.n + 1000}) {
          for (int rank = 0; rank < s.world; ++rank) {
            CAPTURE(s.n);
            CAPTURE(s.world);
            CAPTURE(drop_last);
            CAPTURE(position);
            CAPTURE(rank);
            DistributedSampler sampler(s.n, s.world, rank, kSeed, /*shuffle=*/true, drop_last);
            const at::Tensor rest = sampler.indices_from(position);
            CHECK(rest.numel() == 0);
            CHECK(rest.dtype() == at::kLong);
          }
        }
      }
    }
  }
}

}  // namespace mnist_ddp::testing
