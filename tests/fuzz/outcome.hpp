// tests/fuzz/outcome.hpp — provides: expect_only<E>(action), which lets the documented error type
// through as a normal outcome and nothing else; require_property, a check that aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace mnist_ddp::fuzz {

/// Runs `action`; the error type the API documents (`Expected`) is a normal outcome for hostile
/// input. Anything else escapes: libFuzzer reports the uncaught exception as a crash.
template <typename Expected, typename Action>
void expect_only(Action&& action) {
  try {
    action();
  } catch (const Expected&) {
  }
}

/// Stops the fuzzer with a message when a property of a successful parse does not hold.
inline void require_property(bool ok, const char* property) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", property);
  std::abort();
}

}  // namespace mnist_ddp::fuzz
