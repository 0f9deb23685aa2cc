// lib/checkpoint/json_read.hpp — provides: parse_bounded_json, exact_integer<T>: JSON in bounds.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace mnist_ddp::checkpoint {

/// The deepest nesting a manifest or checkpoint header may have (they use three levels).
constexpr int kMaxJsonDepth = 16;

/// `text` parsed, or CheckpointError("<what>: <problem>") when over `max_bytes` or kMaxJsonDepth:
/// copying, printing or freeing a value recurses per level, so depth could exhaust the stack.
nlohmann::json parse_bounded_json(std::string_view text, std::size_t max_bytes,
                                  const std::string& what);

/// `value` as T when it is a JSON integer within T's range, else nullopt. Not get<T>(): its
/// static_cast is undefined for an out-of-range double and wraps integers silently.
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
