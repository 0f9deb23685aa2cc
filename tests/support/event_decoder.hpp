// tests/support/event_decoder.hpp — provides: decode_event, a TensorBoard Event record decoded by
// the protoc-generated classes into plain structs, so tests need not include the generated
// headers (which must not meet LibTorch's include paths; see lib/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mnist_ddp::testing {

/// One Summary.Value; `has_simple_value` is false when the value's oneof is empty.
struct DecodedValue {
  std::string tag;
  bool has_simple_value = false;
  float simple_value = 0;
};

/// The fields of an Event that our writer may set.
struct DecodedEvent {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string kind;  // "file_version", "summary" or "none": which member of the oneof is set
  std::string file_version;
  std::vector<DecodedValue> values;
};

/// Parses the data of one record as an Event; throws std::runtime_error when it does not parse.
DecodedEvent decode_event(const std::string& data);

}  // namespace mnist_ddp::testing
