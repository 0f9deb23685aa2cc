// lib/checkpoint/checkpoint_file.hpp — provides: CheckpointContents, encode/decode_checkpoint,
// type_name, parse_bounded_json, exact_integer<T> (JSON in bounds).
// Note [Checkpoint format]: only a JSON header and plain numeric arrays, never code or pickles, so
// loading runs nothing; every length, offset, type and shape is checked before a byte is used.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
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

/// The type's name in the checkpoint format ("float32"; Note [Checkpoint format]), else LibTorch's.
std::string type_name(at::ScalarType type);

/// `text` parsed, or CheckpointError("<what>: <problem>") past `max_bytes` or 16 levels (stack).
nlohmann::json parse_bounded_json(std::string_view text, std::size_t max_bytes,
                                  const std::string& what);

/// `value` as T when a JSON integer in T's range, else nullopt (get<T>() wraps or is undefined).
template <typename T>
std::optional<T> exact_integer(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::uint64_t));
  if (value.is_number_unsigned()) {  // nlohmann's type for every integer >= 0
    const auto v = value.get<std::uint64_t>();
    if (v <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(v);
  } else if (value.is_number_integer()) {  // negative
    const auto v = value.get<std::int64_t>();
    if (std::is_signed_v<T> && v >= static_cast<std::int64_t>(std::numeric_limits<T>::min())) {
      return static_cast<T>(v);
    }
  }
  return std::nullopt;
}

}  // namespace mnist_ddp::checkpoint
