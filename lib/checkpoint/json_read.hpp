// lib/checkpoint/json_read.hpp — provides: parse_bounded_json, JSON text parsed only within a
// size and a nesting depth, and exact_integer<T>, a JSON number read as an integer type only when
// it is an integer that the type holds exactly.
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

/// `text` parsed, when it is JSON of at most `max_bytes` bytes nested at most kMaxJsonDepth
/// deep; otherwise throws CheckpointError("<what>: <the problem>"). Copying, printing or freeing
/// a value recurses once per level, so an unbounded depth could exhaust the stack.
nlohmann::json parse_bounded_json(std::string_view text, std::size_t max_bytes,
                                  const std::string& what);

/// `value` as T when it is a JSON integer within T's range; nullopt for anything else (a
/// fraction, a number beyond 64 bits, which nlohmann stores as a double, a string ...).
/// nlohmann's get<T>() converts with static_cast: a double beyond T's range, such as
/// 418446744073709551615 read as an int64, is undefined behaviour, and integers wrap silently.
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
