// lib/data/idx_file.cpp — IDX parsing on top of zlib's gzread, which reads raw files unchanged.
#include "data/idx_file.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>

#include <ATen/ATen.h>
#include <zlib.h>

#include "common/error.hpp"

namespace mnist_ddp::data {
namespace {

constexpr unsigned char kUnsignedByteType = 0x08;
constexpr int kMaxDims = 4;
// A header that promises more than this is corrupt, not a data set; refusing it keeps a
// damaged file from triggering a huge allocation.
constexpr std::int64_t kMaxBytes = std::int64_t{8} << 30;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw DataError(path + ": " + problem);
}

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzHandle = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

/// Reads up to `size` bytes; returns how many were read. Corrupt gzip data is an error.
std::int64_t read_bytes(gzFile file, const std::string& path, void* into, std::int64_t size) {
  auto* out = static_cast<unsigned char*>(into);
  std::int64_t done = 0;
  while (done < size) {
    // gzread takes an unsigned int length; read in chunks well below its limit.
    const auto chunk = static_cast<unsigned>(std::min<std::int64_t>(size - done, 1 << 30));
    const int got = gzread(file, out + done, chunk);
    if (got < 0) {
      int zerr = 0;
      const char* text = gzerror(file, &zerr);
      fail(path, std::string("corrupt gzip data (") + text + ")");
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

std::uint32_t big_endian(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

}  // namespace

IdxArray read_idx(const std::string& path) {
  GzHandle file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");

  std::array<unsigned char, 4> magic{};
  if (read_bytes(file.get(), path, magic.data(), 4) != 4) {
    fail(path, "too short for an IDX header (empty or truncated file)");
  }
  if (magic[0] != 0 || magic[1] != 0) {
    std::ostringstream text;
    text << "not an IDX file: bad magic 0x" << std::hex << big_endian(magic.data())
         << " (IDX files start with two zero bytes)";
    fail(path, text.str());
  }
  if (magic[2] != kUnsignedByteType) {
    std::ostringstream text;
    text << "unsupported IDX element type 0x" << std::hex << int{magic[2]}
         << " (only unsigned bytes, 0x08, are MNIST)";
    fail(path, text.str());
  }
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxDims) {
    fail(path, "IDX header declares " + std::to_string(ndims) + " dimensions (expected 1 to " +
                   std::to_string(kMaxDims) + ")");
  }

  IdxArray array;
  std::int64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    std::array<unsigned char, 4> field{};
    if (read_bytes(file.get(), path, field.data(), 4) != 4) {
      fail(path, "truncated IDX header (dimension " + std::to_string(d) + " missing)");
    }
    const std::int64_t size = big_endian(field.data());
    if (size == 0) fail(path, "dimension " + std::to_string(d) + " is 0");
    if (size > kMaxBytes / total) {
      fail(path, "implausible IDX header: more than " + std::to_string(kMaxBytes) + " bytes");
    }
    total *= size;
    array.dims.push_back(size);
  }

  array.values = at::empty(array.dims, at::TensorOptions().dtype(at::kByte));
  const std::int64_t got = read_bytes(file.get(), path, array.values.data_ptr(), total);
  if (got != total) {
    fail(path, "truncated: the header promises " + std::to_string(total) +
                   " bytes of data, the file holds " + std::to_string(got));
  }
  unsigned char extra = 0;
  if (read_bytes(file.get(), path, &extra, 1) != 0) {
    fail(path, "trailing bytes after the " + std::to_string(total) +
                   " bytes of data the header declares");
  }
  return array;
}

}  // namespace mnist_ddp::data
