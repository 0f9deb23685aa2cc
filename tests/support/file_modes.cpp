// tests/support/file_modes.cpp — stat and umask.
#include "support/file_modes.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>

namespace mnist_ddp::testing {

unsigned permissions(const std::string& path) {
  struct stat info {};
  REQUIRE(stat(path.c_str(), &info) == 0);
  return static_cast<unsigned>(info.st_mode & 0777);
}

const std::vector<UmaskCase>& umask_cases() {
  static const std::vector<UmaskCase> cases = {
      {0022, 0644, "umask 022"}, {0077, 0600, "umask 077"}, {0002, 0664, "umask 002"}};
  return cases;
}

ScopedUmask::ScopedUmask(unsigned mask) : previous_(umask(static_cast<mode_t>(mask))) {}

ScopedUmask::~ScopedUmask() { umask(previous_); }

}  // namespace mnist_ddp::testing
