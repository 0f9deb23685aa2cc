// lib/data/idx_file.hpp — provides: read_idx, the reader for IDX files (the MNIST format),
// raw or gzip-compressed, with every header field checked against the data.
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

/// Reads an IDX file of unsigned bytes (type code 0x08), raw or .gz (detected from the
/// content). Throws DataError naming the file and the problem: unreadable, bad magic,
/// unsupported type, zero or implausible dimensions, truncated data, trailing bytes, corrupt gzip.
IdxArray read_idx(const std::string& path);

}  // namespace mnist_ddp::data
