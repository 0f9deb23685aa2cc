// tests/support/idx_writer.cpp — writing and reading test files byte for byte, raw or through zlib;
// comparing tensors bit for bit.
#include "support/idx_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <zlib.h>

namespace mnist_ddp::testing {

TempDir::TempDir() {
  std::string pattern = "/tmp/mnist_ddp_unit_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed for " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  // A destructor must not throw; a leftover folder in /tmp is the worst outcome.
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Bytes idx_bytes(const std::array<unsigned char, 4>& magic, const std::vector<std::uint32_t>& dims,
                const Bytes& payload) {
  Bytes bytes(magic.begin(), magic.end());
  for (std::uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      bytes.push_back(static_cast<unsigned char>(d >> shift));
    }
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

Bytes ubyte_idx(const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  const auto ndims = static_cast<unsigned char>(dims.size());
  return idx_bytes({0x00, 0x00, 0x08, ndims}, dims, payload);
}

Bytes pattern_bytes(std::size_t count) {
  Bytes bytes(count);
  // 7 is coprime with 256, so the pattern runs through every byte value before it repeats.
  for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  return bytes;
}

Bytes gzip_header_then_garbage() {
  // Magic 1f 8b, method 8 (deflate), no flags, no mtime, no extra flags, OS 3 (Unix).
  const std::array<unsigned char, 10> header = {0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03};
  // 0xff starts a deflate block of the reserved type 3, which inflate rejects at once.
  Bytes bytes(header.size() + 64, 0xff);
  std::copy(header.begin(), header.end(), bytes.begin());
  return bytes;
}

void write_file(const std::string& path, const Bytes& bytes, Compression compression) {
  if (compression == Compression::kRaw) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
    return;
  }
  gzFile out = gzopen(path.c_str(), "wb");
  if (out == nullptr) throw std::runtime_error("cannot gzopen " + path);
  const int written =
      bytes.empty() ? 0 : gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
  const int closed = gzclose(out);
  if (written != static_cast<int>(bytes.size()) || closed != Z_OK) {
    throw std::runtime_error("cannot gzwrite " + path);
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  REQUIRE(file.good());
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous();
  const at::Tensor cb = b.contiguous();
  const auto bytes = static_cast<std::size_t>(ca.numel()) * ca.element_size();
  return bytes == 0 || std::memcmp(ca.data_ptr(), cb.data_ptr(), bytes) == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace mnist_ddp::testing
