// tests/support/idx_writer.hpp — provides: TempDir (a scratch folder removed on destruction), IDX
// bytes from magic/dims/payload (well-formed or not), raw and gzip file writers, read_bytes,
// same_bits, contains, error_message.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::testing {

using Bytes = std::vector<unsigned char>;

/// A fresh folder under /tmp, removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The folder itself.
  const std::string& path() const { return path_; }
  /// `name` inside the folder.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// The bytes of an IDX file exactly as described: `magic`, each of `dims` as a big-endian
/// uint32, then `payload`. Nothing is checked, so the parts may contradict each other.
Bytes idx_bytes(const std::array<unsigned char, 4>& magic, const std::vector<std::uint32_t>& dims,
                const Bytes& payload);

/// A well-formed IDX file of unsigned bytes (type 0x08) with the given dims and payload.
Bytes ubyte_idx(const std::vector<std::uint32_t>& dims, const Bytes& payload);

/// `count` bytes of a fixed, non-constant pattern, so misplaced bytes show up in comparisons.
Bytes pattern_bytes(std::size_t count);

/// A valid gzip member header followed by bytes that are not a deflate stream.
Bytes gzip_header_then_garbage();

enum class Compression { kRaw, kGzip };

/// Writes `bytes` to `path`, through zlib's gzwrite when `compression` is kGzip.
void write_file(const std::string& path, const Bytes& bytes,
                Compression compression = Compression::kRaw);

/// The whole file at `path`, byte for byte; a doctest REQUIRE fails when it cannot be opened.
std::string read_bytes(const std::string& path);

/// True when both tensors have the same type, shape and bytes (so NaNs and -0.0 count too).
bool same_bits(const at::Tensor& a, const at::Tensor& b);

/// True when `part` occurs in `text`.
bool contains(const std::string& text, const std::string& part);

/// The what() of the `E` that `action` throws, or "(nothing thrown)"; other exceptions pass
/// through, so doctest reports them as failures.
template <typename E, typename F>
std::string error_message(F&& action) {
  try {
    action();
  } catch (const E& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace mnist_ddp::testing
