// tests/support/file_modes.hpp — provides: permissions (a file's mode bits), ScopedUmask and
// umask_cases, for tests that check which mode a written file gets under a given umask.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace mnist_ddp::testing {

/// The permission bits of `path`, e.g. 0644.
unsigned permissions(const std::string& path);

/// A umask, and the mode of a file created with 0666 under it.
struct UmaskCase {
  unsigned mask;
  unsigned mode;
  std::string name;  // doctest would print a const char* as an address
};

/// Umasks 022, 077 and 002: the usual one, owner-only, and one that grants the group writing.
const std::vector<UmaskCase>& umask_cases();

/// Sets the process umask for the lifetime of the object.
class ScopedUmask {
 public:
  explicit ScopedUmask(unsigned mask);
  ~ScopedUmask();
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t previous_;
};

}  // namespace mnist_ddp::testing
