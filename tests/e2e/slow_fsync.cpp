// tests/e2e/slow_fsync.cpp — provides: an fsync that sleeps SLOW_FSYNC_SECONDS before syncing,
// preloaded into one rank by tests/e2e/test_stop_order.sh, so that a checkpoint write takes
// seconds and a rank that does not wait for it shows.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static const Fsync real_fsync = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  const char* seconds = std::getenv("SLOW_FSYNC_SECONDS");
  if (seconds != nullptr) sleep(static_cast<unsigned>(std::atoi(seconds)));
  return real_fsync(fd);
}
