// lib/data/idx_file.cpp — IDX parsing of raw and gzip files (zlib's inflate).
#include "data/idx_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include <ATen/ATen.h>
#include <zlib.h>

#include "common/error.hpp"

namespace mnist_ddp::data {
namespace {

constexpr unsigned char kUnsignedByteType = 0x08;
constexpr int kMaxDims = 4;
// A header promising more is corrupt; refusing it avoids a huge allocation.
constexpr std::int64_t kMaxBytes = std::int64_t{8} << 30;
// Deflate's best ratio (258 bytes in 2 bits) bounds a gzip file's content.
constexpr std::int64_t kMaxGzipRatio = 1032;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw DataError(path + ": " + problem);
}

// Note [Reading gzip with inflate]: zlib's gz* functions report damage differently across versions
// (some not at all); inflate() reports it alike in all. Like gzip -d: concatenated members are one
// stream, non-gzip is read as is.

constexpr std::size_t kInputChunk = std::size_t{1} << 16;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

/// The bytes of an IDX file: as they are on disk, or decompressed where the file is gzip.
class IdxBytes {
 public:
  explicit IdxBytes(const std::string& path)
      : path_(path), file_(std::fopen(path.c_str(), "rb")), input_(kInputChunk) {
    if (!file_) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
    refill();
    gzip_ = stream_.avail_in >= 2 && input_[0] == 0x1f && input_[1] == 0x8b;
    // Decode a gzip wrapper only (16), with deflate's largest window (MAX_WBITS).
    if (gzip_ && inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      fail(path, "cannot start decompressing (out of memory)");
    }
  }
  ~IdxBytes() {
    if (gzip_) inflateEnd(&stream_);
  }
  IdxBytes(const IdxBytes&) = delete;
  IdxBytes& operator=(const IdxBytes&) = delete;

  bool gzip() const { return gzip_; }

  /// Up to `size` bytes, fewer only at the end. Damaged gzip and read errors throw DataError.
  std::int64_t read(void* into, std::int64_t size) {
    auto* out = static_cast<unsigned char*>(into);
    std::int64_t done = 0;
    while (done < size) {
      // z_stream counts in unsigned int; read in chunks well below its limit.
      const auto chunk = static_cast<uInt>(std::min<std::int64_t>(size - done, 1 << 30));
      const std::int64_t got =
          gzip_ ? inflate_into(out + done, chunk) : copy_into(out + done, chunk);
      if (got == 0) break;
      done += got;
    }
    return done;
  }

 private:
  /// Reads the next chunk of the file into the input buffer; false at the end of the file.
  bool refill() {
    const std::size_t got = std::fread(input_.data(), 1, input_.size(), file_.get());
    if (got == 0 && std::ferror(file_.get())) {
      fail(path_, std::string("cannot read (") + std::strerror(errno) + ")");
    }
    stream_.next_in = input_.data();
    stream_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  std::int64_t copy_into(unsigned char* out, uInt size) {
    if (stream_.avail_in == 0 && !refill()) return 0;
    const uInt count = std::min(size, stream_.avail_in);
    std::memcpy(out, stream_.next_in, count);
    stream_.next_in += count;
    stream_.avail_in -= count;
    return count;
  }

  std::int64_t inflate_into(unsigned char* out, uInt size) {
    stream_.next_out = out;
    stream_.avail_out = size;
    while (stream_.avail_out > 0 && !ended_) {
      if (stream_.avail_in == 0 && !refill()) {
        fail(path_, "corrupt gzip data (unexpected end of file)");
      }
      const bool member_start = stream_.total_out == 0 && members_ > 0;
      const int status = inflate(&stream_, Z_NO_FLUSH);
      if (status == Z_STREAM_END) {  // the member's CRC-32 and length matched its data
        ++members_;
        ended_ = stream_.avail_in == 0 && !refill();
        if (!ended_) inflateReset(&stream_);  // another member follows, or trailing bytes
      } else if (status == Z_MEM_ERROR) {
        fail(path_, "cannot decompress (out of memory)");
      } else if (status != Z_OK && status != Z_BUF_ERROR) {  // the data, not the machine
        const std::string reason = stream_.msg != nullptr ? stream_.msg : zError(status);
        fail(path_, member_start ? "corrupt gzip data (bytes after the end of the gzip stream "
                                   "that do not start another member: " +
                                       reason + ")"
                                 : "corrupt gzip data (" + reason + ")");
      }
    }
    return static_cast<std::int64_t>(size - stream_.avail_out);
  }

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::vector<unsigned char> input_;
  z_stream stream_{};  // also the cursor into input_ when the file is raw
  bool gzip_ = false;
  int members_ = 0;     // gzip members decoded to their end
  bool ended_ = false;  // the last member ended with the file
};

/// The most data bytes `path` can hold after its header (kMaxBytes for a non-regular file).
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
  IdxBytes file(path);

  std::array<unsigned char, 4> magic{};
  if (file.read(magic.data(), 4) != 4) {
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
    if (file.read(field.data(), 4) != 4) {
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

  // Before allocating: a short file promising gigabytes fails as truncated, not out of memory.
  const bool raw = !file.gzip();
  const std::int64_t most = most_data_bytes(path, raw, 4 + 4 * std::int64_t{ndims});
  if (total > most) {
    fail(path, "truncated: the header promises " + std::to_string(total) +
                   " bytes of data, the file holds " + (raw ? "" : "at most ") +
                   std::to_string(most) + (raw ? "" : " (gzip)"));
  }
  array.values = at::empty(array.dims, at::TensorOptions().dtype(at::kByte));
  const std::int64_t got = file.read(array.values.data_ptr(), total);
  if (got != total) {
    fail(path, "truncated: the header promises " + std::to_string(total) +
                   " bytes of data, the file holds " + std::to_string(got));
  }
  unsigned char extra = 0;
  if (file.read(&extra, 1) != 0) {
    fail(path, "trailing bytes after the " + std::to_string(total) +
                   " bytes of data the header declares");
  }
  return array;
}

}  // namespace mnist_ddp::data
