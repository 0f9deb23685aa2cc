// tests/support/file_modes.hpp — provides: permissions (a file's mode bits) and ScopedUmask, for
// tests that check which mode a written file gets under a given umask.
#pragma once

#include <string>

#include <sys/types.h>

namespace mnist_ddp::testing {

/// The permission bits of `path`, e.g. 0644.
unsigned permissions(const std::string& path);

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
