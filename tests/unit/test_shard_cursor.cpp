// tests/unit/test_shard_cursor.cpp — ShardCursor hands out the shard's batches in order from its
// own buffer, and starts again at each start().
#include <doctest/doctest.h>

#include <ATen/ATen.h>

#include "data/shard_cursor.hpp"

namespace mnist_ddp::data {
namespace {

TEST_CASE("ShardCursor: whole batches of the shard in order, from the start of each shard") {
  ShardCursor cursor(/*batch_size=*/4, /*capacity=*/13, c10::Device(c10::kCPU));
  const at::Tensor epoch1 = at::randperm(13, at::kLong);
  cursor.start(epoch1);
  for (int b = 0; b < 3; ++b) {
    CAPTURE(b);
    CHECK(at::equal(cursor.next(), epoch1.narrow(0, 4 * b, 4)));
  }
  // A shorter shard (a resumed epoch) from its own start; the buffer's memory stays the same.
  const at::Tensor resumed = at::arange(100, 109, at::kLong);
  cursor.start(resumed);
  CHECK(at::equal(cursor.next(), resumed.narrow(0, 0, 4)));
  CHECK(at::equal(cursor.next(), resumed.narrow(0, 4, 4)));
  // The shard is copied in: changing the caller's tensor later changes nothing.
  const at::Tensor epoch2 = at::randperm(13, at::kLong);
  cursor.start(epoch2);
  const at::Tensor expected = epoch2.narrow(0, 0, 4).clone();
  epoch2.fill_(0);
  CHECK(at::equal(cursor.next(), expected));
}

TEST_CASE("ShardCursor: a shard larger than its buffer is refused") {
  ShardCursor cursor(/*batch_size=*/2, /*capacity=*/5, c10::Device(c10::kCPU));
  CHECK_THROWS_WITH(cursor.start(at::arange(6, at::kLong)),
                    doctest::Contains("6 indices does not fit its buffer of 5"));
}

}  // namespace
}  // namespace mnist_ddp::data
