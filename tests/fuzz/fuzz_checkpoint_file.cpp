// tests/fuzz/fuzz_checkpoint_file.cpp — provides: the libFuzzer harness of decode_checkpoint.
// Input: the bytes of a checkpoint file. Each input is decoded twice: as it is (signature,
// version and CRC checks) and with its CRC trailer made correct, so that mutations of the header
// and payload reach the parser instead of all failing the CRC. Outcome: contents that encode and
// decode to the same tensors, or CheckpointError.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <ATen/ATen.h>

#include "checkpoint/checkpoint_file.hpp"
#include "common/error.hpp"
#include "outcome.hpp"

namespace {

using mnist_ddp::fuzz::require_property;
namespace checkpoint = mnist_ddp::checkpoint;

constexpr size_t kTrailer = 4;  // the CRC-32 at the end of the file

/// True when both tensors have the same type, shape and bytes.
bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || !a.sizes().equals(b.sizes())) return false;
  const size_t bytes = static_cast<size_t>(a.numel()) * a.element_size();
  return bytes == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), bytes) == 0;
}

void decode_and_check(const std::string& bytes) {
  mnist_ddp::fuzz::expect_only<mnist_ddp::CheckpointError>([&] {
    const checkpoint::CheckpointContents contents =
        checkpoint::decode_checkpoint(bytes, "fuzz input");
    // What we read back, we can write again and read back the same.
    const checkpoint::CheckpointContents again = checkpoint::decode_checkpoint(
        checkpoint::encode_checkpoint(contents), "re-encoded fuzz input");
    require_property(again.tensors.size() == contents.tensors.size(), "same tensor count");
    for (size_t i = 0; i < contents.tensors.size(); ++i) {
      require_property(again.tensors[i].first == contents.tensors[i].first, "same tensor names");
      require_property(same_bits(again.tensors[i].second, contents.tensors[i].second),
                       "tensors survive a round trip bit for bit");
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  decode_and_check(bytes);
  if (bytes.size() >= kTrailer) {
    const std::uint32_t crc = checkpoint::checkpoint_checksum(bytes);
    for (size_t i = 0; i < kTrailer; ++i) {
      bytes[bytes.size() - kTrailer + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    }
    if (std::string_view(bytes) != std::string_view(reinterpret_cast<const char*>(data), size)) {
      decode_and_check(bytes);
    }
  }
  return 0;
}
