// lib/data/idx_file.cpp — IDX parsing on top of zlib's gzread, which reads raw files unchanged.
#include "data/idx_file.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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
// Deflate encodes at best 258 repeated bytes in 2 bits, so a gzip file never holds more than
// 1032 times its own size.
constexpr std::int64_t kMaxGzipRatio = 1032;

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
    // At the end of the data zlib reports a gzip stream cut short (even one that lacks only its
    // CRC trailer) through gzerror, not through the return value.
    int zerr = Z_OK;
    const std::string text = gzerror(file, &zerr);
    if (got < 0 || (got == 0 && zerr != Z_OK)) {
      // zlib prefixes its message with the path, which ours already starts with.
      const std::string reason =
          text.compare(0, path.size() + 2, path + ": ") == 0 ? text.substr(path.size() + 2) : text;
      fail(path, "corrupt gzip data (" + reason + ")");
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

/// zlib verifies the CRC trailer when it reads one, but a file cut exactly before its trailer
/// reads to the end without complaint. The last 4 bytes of a gzip file are the data length
/// modulo 2^32; if they do not match, the trailer is missing or the file has been altered.
void check_gzip_length_trailer(const std::string& path, std::int64_t uncompressed_bytes) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  std::array<unsigned char, 4> tail{};
  if (file.tellg() < 4 || !file.seekg(-4, std::ios::end) ||
      !file.read(reinterpret_cast<char*>(tail.data()), tail.size())) {
    fail(path, "corrupt gzip data (cannot read its length trailer)");
  }
  const std::uint32_t length = std::uint32_t{tail[0]} | (std::uint32_t{tail[1]} << 8) |
                               (std::uint32_t{tail[2]} << 16) | (std::uint32_t{tail[3]} << 24);
  if (length != static_cast<std::uint32_t>(uncompressed_bytes)) {
    fail(path, "corrupt gzip data (its length trailer says " + std::to_string(length) +
                   " bytes, the stream holds " + std::to_string(uncompressed_bytes) + ")");
  }
}

/// The most data bytes `path` can hold after a header of `header_bytes`: exactly what is left of
/// a raw file, at most kMaxGzipRatio times the size of a gzip file. kMaxBytes when the size is
/// unknown (not a regular file).
std::int64_t most_data_bytes(const std::string& path, bool raw, std::int64_t header_bytes) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > static_cast<std::uintmax_t>(kMaxBytes)) return kMaxBytes;
  const auto bytes = static_cast<std::int64_t>(size);
  return raw ? bytes - header_bytes : bytes * kMaxGzipRatio;
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

  // Checked before allocating: a short file whose header promises gigabytes must fail as
  // truncated, not allocate them first (and get the process killed for memory).
  const bool raw = gzdirect(file.get()) != 0;
  const std::int64_t most = most_data_bytes(path, raw, 4 + 4 * std::int64_t{ndims});
  if (total > most) {
    fail(path, "truncated: the header promises " + std::to_string(total) +
                   " bytes of data, the file holds " + (raw ? "" : "at most ") +
                   std::to_string(most) + (raw ? "" : " (gzip)"));
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
  if (!raw) check_gzip_length_trailer(path, 4 + 4 * ndims + total);
  return array;
}

}  // namespace mnist_ddp::data
