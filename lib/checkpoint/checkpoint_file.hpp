// lib/checkpoint/checkpoint_file.hpp — provides: CheckpointContents, encode/decode_checkpoint.
// Note [Checkpoint format]: only a JSON header and plain numeric arrays, never code or pickles, so
// loading runs nothing; every length, offset, type and shape is checked before a byte is used.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

namespace mnist_ddp::checkpoint {

/// The version this build writes; it reads this and older ones.
constexpr std::uint32_t kCheckpointFormatVersion = 1;

struct CheckpointContents {
  nlohmann::json meta;                                      // progress, options, versions
  std::vector<std::pair<std::string, at::Tensor>> tensors;  // CPU copies, in a fixed order
};

/// The file's bytes: magic "MDDPCKPT", format version, JSON header, tensor bytes, CRC-32.
std::string encode_checkpoint(const CheckpointContents& contents);

/// Parses and checks `bytes` from `origin`; CheckpointError: foreign, newer, damaged, inconsistent.
CheckpointContents decode_checkpoint(const std::string& bytes, const std::string& origin);

/// CRC-32 (zlib) of `bytes`.
std::uint32_t checksum(std::string_view bytes);

/// CRC-32 before the trailer, as manifests record it (a whole file's is constant); 0 if too short.
std::uint32_t checkpoint_checksum(std::string_view file_bytes);

}  // namespace mnist_ddp::checkpoint
