// tests/fuzz/fuzz_idx_file.cpp — provides: the libFuzzer harness of read_idx. Input: the bytes of
// an IDX file, raw or gzip. Outcome: an array that matches its header, or DataError.
#include <cstddef>
#include <cstdint>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "data/idx_file.hpp"
#include "memory_file.hpp"
#include "outcome.hpp"

using mnist_ddp::fuzz::require_property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const mnist_ddp::fuzz::MemoryFile file(data, size);
  mnist_ddp::fuzz::expect_only<mnist_ddp::DataError>([&] {
    const mnist_ddp::data::IdxArray array = mnist_ddp::data::read_idx(file.path());
    // What the dataset code relies on once the reader accepts a file.
    require_property(!array.dims.empty() && array.dims.size() <= 4, "1 to 4 dimensions");
    require_property(array.values.scalar_type() == at::kByte, "uint8 values");
    require_property(array.values.sizes().vec() == array.dims, "values shaped as the header");
    require_property(array.values.is_contiguous(), "contiguous values");
    // A raw file holds exactly the header and the values; a gzip file is smaller or larger.
    const auto header = static_cast<std::int64_t>(4 + 4 * array.dims.size());
    require_property(size < 2 || (data[0] == 0x1f && data[1] == 0x8b) ||
                         static_cast<std::int64_t>(size) == header + array.values.numel(),
                     "a raw file's size is its header plus its values");
  });
  return 0;
}
