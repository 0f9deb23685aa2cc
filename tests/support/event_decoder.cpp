// tests/support/event_decoder.cpp — protobuf's ParseFromString on our generated Event class.
#include "support/event_decoder.hpp"

#include <stdexcept>

#include "report/proto/event.pb.h"

namespace mnist_ddp::testing {

DecodedEvent decode_event(const std::string& data) {
  tensorboard::Event event;
  if (!event.ParseFromString(data)) {
    throw std::runtime_error("record data of " + std::to_string(data.size()) +
                             " bytes is not an Event");
  }
  DecodedEvent decoded;
  decoded.wall_time = event.wall_time();
  decoded.step = event.step();
  switch (event.what_case()) {
    case tensorboard::Event::kFileVersion:
      decoded.kind = "file_version";
      decoded.file_version = event.file_version();
      break;
    case tensorboard::Event::kSummary:
      decoded.kind = "summary";
      for (const auto& value : event.summary().value()) {
        decoded.values.push_back({value.tag(),
                                  value.value_case() == tensorboard::Summary::Value::kSimpleValue,
                                  value.simple_value()});
      }
      break;
    default:
      decoded.kind = "none";
  }
  return decoded;
}

}  // namespace mnist_ddp::testing
