// lib/checkpoint/checkpoint_file.hpp — provides: CheckpointContents and encode/decode of the
// checkpoint file format: a JSON header describing named tensors, their raw bytes, and a CRC-32
// trailer. Note [Checkpoint format]: a checkpoint holds only JSON and plain numeric arrays
// (float32, float64, int64, uint8), never code or pickled objects, so loading one cannot run
// anything; every length, offset, type and shape is checked before a byte is used.
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

/// Parses and verifies `bytes` (read from `origin`, named in errors). Throws CheckpointError
/// for a foreign file, a newer format version, a CRC mismatch (truncated or damaged) or a
/// header that does not describe the bytes.
CheckpointContents decode_checkpoint(const std::string& bytes, const std::string& origin);

/// CRC-32 (zlib) of `bytes`.
std::uint32_t checksum(std::string_view bytes);

/// The CRC-32 of a checkpoint file's contents before its trailer, as manifests record it (the
/// CRC of a whole file that ends in its own CRC is a constant, so that would prove nothing).
/// Zero for a file too short to have a trailer.
std::uint32_t checkpoint_checksum(std::string_view file_bytes);

}  // namespace mnist_ddp::checkpoint
