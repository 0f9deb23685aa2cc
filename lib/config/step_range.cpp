// lib/config/step_range.cpp — FIRST:LAST, both whole numbers; nothing else is accepted.
#include "config/step_range.hpp"

#include <charconv>

#include "config/options.hpp"

namespace mnist_ddp::config {
namespace {

/// The whole of `text` as a number, or false.
bool read_number(std::string_view text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end && !text.empty();
}

}  // namespace

void read(const std::string& text, const std::string& option, StepRange& into) {
  const size_t colon = text.find(':');
  const std::string quoted = "'" + text + "'";
  StepRange range;
  if (colon == std::string::npos ||
      !read_number(std::string_view(text).substr(0, colon), range.first) ||
      !read_number(std::string_view(text).substr(colon + 1), range.last)) {
    refuse(option, "FIRST:LAST, two step numbers such as 1:1000", quoted);
  }
  if (range.first < 1) refuse(option, "a range that starts at step 1 or later", quoted);
  if (range.last < range.first) {
    refuse(option, "a range whose last step is not before its first", quoted);
  }
  into = range;
}

std::string to_string(const StepRange& range) {
  return std::to_string(range.first) + ":" + std::to_string(range.last);
}

}  // namespace mnist_ddp::config
