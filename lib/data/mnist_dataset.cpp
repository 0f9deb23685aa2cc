// lib/data/mnist_dataset.cpp — locating the MNIST files and cross-checking them.
#include "data/mnist_dataset.hpp"

#include <cstdio>
#include <filesystem>

#include <ATen/ATen.h>
#include <zlib.h>

#include "common/error.hpp"
#include "data/idx_file.hpp"

namespace mnist_ddp::data {
namespace {

namespace fs = std::filesystem;

/// `dir/name`, or `dir/name.gz` when only the compressed file exists.
std::string locate(const std::string& dir, const std::string& name) {
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) {
    throw DataError("data folder '" + dir +
                    "' does not exist (fill it with scripts/fetch_data.sh, or pass --data-dir)");
  }
  for (const std::string& candidate : {name, name + ".gz"}) {
    const fs::path path = fs::path(dir) / candidate;
    if (fs::exists(path, ignored)) {
      if (!fs::is_regular_file(path, ignored)) {
        throw DataError(path.string() + ": not a regular file");
      }
      return path.string();
    }
  }
  throw DataError("missing data file: neither " + name + " nor " + name + ".gz is in '" + dir +
                  "' (fill it with scripts/fetch_data.sh)");
}

/// CRC-32 of `bytes`' storage, continuing from `crc`.
uLong crc_of(uLong crc, const at::Tensor& bytes) {
  const at::Tensor dense = bytes.contiguous();
  return crc32_z(crc, static_cast<const Bytef*>(dense.data_ptr()), dense.nbytes());
}

}  // namespace

std::string fingerprint(const Dataset& set) {
  char crc[9];
  std::snprintf(crc, sizeof crc, "%08lx", crc_of(crc_of(0, set.images), set.labels));
  return std::to_string(set.size()) + " images (CRC-32 " + crc + ")";
}

Dataset load_mnist(const std::string& dir, Split split) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string images_path = locate(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = locate(dir, prefix + "-labels-idx1-ubyte");
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);

  if (images.dims.size() != 3 || images.dims[1] != kImageSide || images.dims[2] != kImageSide) {
    std::string shape;
    for (auto d : images.dims) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    throw DataError(images_path + ": expected N x 28 x 28 images, the header says " + shape);
  }
  if (labels.dims.size() != 1) {
    throw DataError(labels_path + ": expected a 1-dimensional label file, the header has " +
                    std::to_string(labels.dims.size()) + " dimensions");
  }
  if (images.dims[0] != labels.dims[0]) {
    throw DataError(images_path + " holds " + std::to_string(images.dims[0]) + " images but " +
                    labels_path + " holds " + std::to_string(labels.dims[0]) + " labels");
  }
  const int max_label = labels.values.max().item<int>();
  if (max_label >= kNumClasses) {
    const std::int64_t at_index = labels.values.argmax().item<std::int64_t>();
    throw DataError(labels_path + ": label " + std::to_string(max_label) + " at index " +
                    std::to_string(at_index) + " is out of range (MNIST labels are 0..9)");
  }
  return Dataset{images.values, labels.values.to(at::kLong)};
}

}  // namespace mnist_ddp::data
