// lib/checkpoint/json_read.cpp — JSON parsed within bounds.
#include "checkpoint/json_read.hpp"

#include "common/error.hpp"

namespace mnist_ddp::checkpoint {

nlohmann::json parse_bounded_json(std::string_view text, std::size_t max_bytes,
                                  const std::string& what) {
  if (text.size() > max_bytes) {
    throw CheckpointError(what + ": " + std::to_string(text.size()) + " bytes, over the " +
                          std::to_string(max_bytes) + " allowed");
  }
  bool too_deep = false;
  // Returning false at the limit discards the deeper values, so none is ever built.
  const nlohmann::json::parser_callback_t within_depth =
      [&too_deep](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > kMaxJsonDepth) too_deep = true;
        return !too_deep;
      };
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text, within_depth);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(what + ": " + e.what());
  }
  if (too_deep) {
    throw CheckpointError(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels");
  }
  return parsed;
}

}  // namespace mnist_ddp::checkpoint
