// lib/config/step_range.hpp — provides: StepRange, inclusive steps FIRST:LAST (--timeline-steps).
#pragma once

#include <cstdint>
#include <string>

namespace mnist_ddp::config {

struct StepRange {
  std::int64_t first = 1;  // 1-based, as optimizer steps are counted
  std::int64_t last = 1;

  bool contains(std::int64_t step) const { return first <= step && step <= last; }
};

/// Reads "FIRST:LAST" with 1 <= FIRST <= LAST; throws UsageError naming `option` and the text.
void read(const std::string& text, const std::string& option, StepRange& into);

/// "FIRST:LAST", as read reads it.
std::string to_string(const StepRange& range);

}  // namespace mnist_ddp::config
