// tests/unit/test_batch_maker.cpp — BatchMaker on a tiny in-memory data set: shapes, dtypes,
// normalization and index order.
#include <cmath>

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include "common/error.hpp"
#include "data/batch_maker.hpp"

namespace mnist_ddp::testing {
namespace {

using data::Batch;
using data::BatchMaker;
using data::Dataset;

constexpr double kMean = 0.1307;
constexpr double kStd = 0.3081;

/// The pixel of image `i` at (`row`, `col`): different in every image, covering 0..255.
std::uint8_t pixel(std::int64_t i, std::int64_t row, std::int64_t col) {
  return static_cast<std::uint8_t>((i * 61 + row * 9 + col * 5) % 256);
}

/// Four images with distinct pixels and labels 3, 1, 4, 1.
Dataset tiny_dataset() {
  at::Tensor images = at::empty({4, 28, 28}, at::kByte);
  auto pixels = images.accessor<std::uint8_t, 3>();
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t r = 0; r < 28; ++r) {
      for (std::int64_t c = 0; c < 28; ++c) pixels[i][r][c] = pixel(i, r, c);
    }
  }
  return Dataset{images, at::tensor({3, 1, 4, 1}, at::kLong)};
}

/// What BatchMaker should make of `value`, computed in double.
double normalized(std::uint8_t value) { return (value / 255.0 - kMean) / kStd; }

}  // namespace

TEST_SUITE("BatchMaker") {
  TEST_CASE("a batch is (B, 1, 28, 28) float inputs and (B) int64 targets") {
    const Dataset dataset = tiny_dataset();
    const Batch batch = BatchMaker(dataset, kMean, kStd).make(at::tensor({2, 0, 3}, at::kLong));
    CHECK(batch.inputs.sizes().vec() == std::vector<std::int64_t>{3, 1, 28, 28});
    CHECK(batch.inputs.dtype() == at::kFloat);
    CHECK(batch.targets.sizes().vec() == std::vector<std::int64_t>{3});
    CHECK(batch.targets.dtype() == at::kLong);
  }

  TEST_CASE("pixels are normalized as (pixel / 255 - mean) / std, in index order") {
    const Dataset dataset = tiny_dataset();
    const std::vector<std::int64_t> order = {2, 0, 3, 2};
    const Batch batch = BatchMaker(dataset, kMean, kStd).make(at::tensor(order, at::kLong));
    const auto inputs = batch.inputs.accessor<float, 4>();
    const std::vector<std::pair<int, int>> spots = {{0, 0}, {0, 27}, {13, 14}, {27, 0}, {27, 27}};
    for (std::size_t b = 0; b < order.size(); ++b) {
      // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
      for (const auto& spot : spots) {
        const int r = spot.first;
        const int c = spot.second;
        CAPTURE(b);
        CAPTURE(r);
        CAPTURE(c);
        CHECK(std::abs(inputs[b][0][r][c] - normalized(pixel(order[b], r, c))) < 1e-6);
      }
    }
    // Every pixel, not only the spots above.
    const at::Tensor expected =
        (dataset.images.index_select(0, at::tensor(order, at::kLong)).to(at::kDouble) / 255.0 -
         kMean) /
        kStd;
    CHECK(at::allclose(batch.inputs.squeeze(1).to(at::kDouble), expected, /*rtol=*/0,
                       /*atol=*/1e-6));
  }

  TEST_CASE("the CPU pass rounds as the tensor operations do, bit for bit") {
    const Dataset dataset = tiny_dataset();
    const at::Tensor order = at::tensor({3, 1, 2, 0, 1}, at::kLong);
    const Batch batch = BatchMaker(dataset, kMean, kStd).make(order);
    const double scale = 1.0 / (255.0 * kStd);
    const double shift = -kMean / kStd;
    const at::Tensor expected =
        dataset.images.index_select(0, order).to(at::kFloat).mul_(scale).add_(shift).unsqueeze_(1);
    CHECK(at::equal(batch.inputs, expected));
  }

  TEST_CASE("the normalized copy a GPU gathers from gives the CPU batches, bit for bit") {
    const Dataset dataset = tiny_dataset();
    const at::Tensor order = at::tensor({3, 1, 2, 0, 1}, at::kLong);
    const at::Tensor copy = data::normalized_images(dataset.images, kMean, kStd);
    CHECK(copy.sizes().vec() == std::vector<std::int64_t>{4, 1, 28, 28});
    CHECK(at::equal(copy.index_select(0, order),
                    BatchMaker(dataset, kMean, kStd).make(order).inputs));
  }

  TEST_CASE("an index outside the data set is refused, naming it") {
    const Dataset dataset = tiny_dataset();
    const BatchMaker maker(dataset, kMean, kStd);
    CHECK_THROWS_WITH_AS(maker.make(at::tensor({0, 4}, at::kLong)),
                         "BatchMaker: index 4 is outside the data set of 4 images", Error);
    CHECK_THROWS_WITH_AS(maker.make(at::tensor({-1}, at::kLong)),
                         "BatchMaker: index -1 is outside the data set of 4 images", Error);
  }

  TEST_CASE("targets are the labels of the chosen indices") {
    const Dataset dataset = tiny_dataset();
    const Batch batch = BatchMaker(dataset, kMean, kStd).make(at::tensor({2, 1, 0, 2}, at::kLong));
    CHECK(at::equal(batch.targets, at::tensor({4, 1, 3, 4}, at::kLong)));
  }

  TEST_CASE("mean 0 and std 1 give pixels scaled to [0, 1]") {
    const Dataset dataset = tiny_dataset();
    const Batch batch =
        BatchMaker(dataset, /*mean=*/0.0, /*std=*/1.0).make(at::tensor({1}, at::kLong));
    CHECK(std::abs(batch.inputs[0][0][5][7].item<double>() - pixel(1, 5, 7) / 255.0) < 1e-6);
  }
}

}  // namespace mnist_ddp::testing
