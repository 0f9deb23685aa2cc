// tests/unit/test_mnist_dataset.cpp — load_mnist on synthetic folders, broken ones, and the real
// Fashion-MNIST when the machine has it.
#include <filesystem>

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include "common/error.hpp"
#include "data/mnist_dataset.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using data::load_mnist;
using data::Split;

constexpr std::uint32_t kSide = 28;
const std::string kTrainImages = "train-images-idx3-ubyte";
const std::string kTrainLabels = "train-labels-idx1-ubyte";

/// Labels 0, 1, ..., 9, 0, 1, ...
Bytes cycling_labels(std::uint32_t count) {
  Bytes labels(count);
  for (std::uint32_t i = 0; i < count; ++i) labels[i] = static_cast<unsigned char>(i % 10);
  return labels;
}

/// Writes a consistent image/label pair of `count` samples for `prefix` ("train" or "t10k").
void write_split(const TempDir& dir, const std::string& prefix, std::uint32_t count,
                 Compression images, Compression labels) {
  const std::string gz_images = images == Compression::kGzip ? ".gz" : "";
  const std::string gz_labels = labels == Compression::kGzip ? ".gz" : "";
  write_file(dir.file(prefix + "-images-idx3-ubyte" + gz_images),
             ubyte_idx({count, kSide, kSide}, pattern_bytes(count * kSide * kSide)), images);
  write_file(dir.file(prefix + "-labels-idx1-ubyte" + gz_labels),
             ubyte_idx({count}, cycling_labels(count)), labels);
}

/// The DataError message load_mnist gives for `dir`.
std::string load_error(const std::string& dir) {
  return error_message<DataError>([&] { load_mnist(dir, Split::kTrain); });
}

/// Checks sizes, dtypes and every value of a data set written by write_split.
void check_dataset(const data::Dataset& dataset, std::int64_t count) {
  REQUIRE(dataset.size() == count);
  CHECK(dataset.images.dtype() == at::kByte);
  CHECK(dataset.images.sizes().vec() == std::vector<std::int64_t>{count, kSide, kSide});
  CHECK(dataset.labels.dtype() == at::kLong);
  CHECK(dataset.labels.sizes().vec() == std::vector<std::int64_t>{count});

  const Bytes pixels = pattern_bytes(count * kSide * kSide);
  const at::Tensor expected_images =
      at::from_blob(const_cast<unsigned char*>(pixels.data()), {count, kSide, kSide}, at::kByte);
  CHECK(at::equal(dataset.images, expected_images));
  CHECK(at::equal(dataset.labels, at::arange(count, at::kLong).remainder(10)));
}

}  // namespace

TEST_SUITE("load_mnist") {
  TEST_CASE("loads raw, gzip and mixed folders alike") {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    for (const auto& pair : {std::pair{Compression::kRaw, Compression::kRaw},
                             std::pair{Compression::kGzip, Compression::kGzip},
                             std::pair{Compression::kRaw, Compression::kGzip},
                             std::pair{Compression::kGzip, Compression::kRaw}}) {
      const Compression images = pair.first;
      const Compression labels = pair.second;
      CAPTURE(static_cast<int>(images));
      CAPTURE(static_cast<int>(labels));
      TempDir dir;
      write_split(dir, "train", 12, images, labels);
      check_dataset(load_mnist(dir.path(), Split::kTrain), 12);
    }
  }

  TEST_CASE("Split::kTest reads the t10k files") {
    TempDir dir;
    write_split(dir, "train", 5, Compression::kRaw, Compression::kRaw);
    write_split(dir, "t10k", 3, Compression::kRaw, Compression::kRaw);
    check_dataset(load_mnist(dir.path(), Split::kTest), 3);
    check_dataset(load_mnist(dir.path(), Split::kTrain), 5);
  }

  TEST_CASE("a missing folder is named") {
    TempDir dir;
    const std::string missing = dir.file("nowhere");
    const std::string message = load_error(missing);
    INFO("message: ", message);
    CHECK(contains(message, "data folder '" + missing + "' does not exist"));
  }

  TEST_CASE("a missing file names both the raw and the .gz name") {
    TempDir dir;
    write_file(dir.file(kTrainImages), ubyte_idx({1, kSide, kSide}, pattern_bytes(kSide * kSide)));
    const std::string message = load_error(dir.path());
    INFO("message: ", message);
    CHECK(contains(message, "neither " + kTrainLabels + " nor " + kTrainLabels + ".gz"));
    CHECK(contains(message, dir.path()));
  }

  TEST_CASE("images that are not 28x28 are refused") {
    TempDir dir;
    write_file(dir.file(kTrainImages), ubyte_idx({2, 27, 28}, pattern_bytes(2 * 27 * 28)));
    write_file(dir.file(kTrainLabels), ubyte_idx({2}, {0, 1}));
    const std::string message = load_error(dir.path());
    INFO("message: ", message);
    CHECK(contains(message, dir.file(kTrainImages)));
    CHECK(contains(message, "the header says 2x27x28"));
  }

  TEST_CASE("image and label counts must agree") {
    TempDir dir;
    write_file(dir.file(kTrainImages), ubyte_idx({3, kSide, kSide}, pattern_bytes(3 * 784)));
    write_file(dir.file(kTrainLabels), ubyte_idx({4}, {0, 1, 2, 3}));
    const std::string message = load_error(dir.path());
    INFO("message: ", message);
    CHECK(contains(message, "holds 3 images"));
    CHECK(contains(message, dir.file(kTrainLabels) + " holds 4 labels"));
  }

  TEST_CASE("a label of 10 is out of range and its index is named") {
    TempDir dir;
    write_file(dir.file(kTrainImages), ubyte_idx({5, kSide, kSide}, pattern_bytes(5 * 784)));
    write_file(dir.file(kTrainLabels), ubyte_idx({5}, {0, 9, 3, 10, 2}));
    const std::string message = load_error(dir.path());
    INFO("message: ", message);
    CHECK(contains(message, dir.file(kTrainLabels)));
    CHECK(contains(message, "label 10 at index 3 is out of range"));
  }

  TEST_CASE("the real Fashion-MNIST has 60000 training and 10000 test samples") {
    const std::string fashion = "/usr/share/datasets/fashion-mnist";
    if (!std::filesystem::is_directory(fashion)) {
      MESSAGE("skipped: " << fashion << " is not on this machine");
      return;
    }
    const data::Dataset train = load_mnist(fashion, Split::kTrain);
    const data::Dataset test = load_mnist(fashion, Split::kTest);
    CHECK(train.size() == 60000);
    CHECK(test.size() == 10000);
    CHECK(train.images.sizes().vec() == std::vector<std::int64_t>{60000, kSide, kSide});
    // Fashion-MNIST is balanced: every class has 6000 training images.
    CHECK(at::equal(at::bincount(train.labels), at::full({10}, 6000, at::kLong)));
  }
}

}  // namespace mnist_ddp::testing
