// lib/data/idx_file.hpp — provides: read_idx, a checked reader of IDX files, raw or gzip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::data {

/// The contents of one IDX file of unsigned bytes.
struct IdxArray {
  std::vector<std::int64_t> dims;  // as in the header, e.g. {60000, 28, 28}
  at::Tensor values;               // uint8, shaped `dims`
};

/// Reads an IDX file of unsigned bytes, raw or gzip; DataError names the file and the problem.
IdxArray read_idx(const std::string& path);

}  // namespace mnist_ddp::data
