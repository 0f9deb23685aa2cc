// tests/e2e/slow_fsync.cpp — provides: an fsync that sleeps SLOW_FSYNC_SECONDS before syncing
// and, after the real fsync returns, appends "<seconds since the epoch> <path of the fd>" to the
// file SLOW_FSYNC_LOG; preloaded into one rank by tests/e2e/test_stop_order.sh, so that a
// checkpoint write takes seconds, a rank that does not wait for it shows, and the test knows
// when the checkpoint became durable.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// Appends the line for `fd`, synced at `done`, to the log, in one write so lines never mix.
void log_fsync(const char* log, int fd, const timespec& done) {
  char target[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
  target[length < 0 ? 0 : length] = '\0';
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%lld.%09ld ", static_cast<long long>(done.tv_sec),
                done.tv_nsec);
  const std::string line = stamp + std::string(target) + "\n";
  const int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (out < 0 || write(out, line.data(), line.size()) < 0) {
    std::perror("slow_fsync: SLOW_FSYNC_LOG");
  }
  if (out >= 0) close(out);
}

}  // namespace

extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static const Fsync real_fsync = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  const char* seconds = std::getenv("SLOW_FSYNC_SECONDS");
  if (seconds != nullptr) sleep(static_cast<unsigned>(std::atoi(seconds)));
  const int result = real_fsync(fd);
  const int error = errno;  // the caller reports a failed fsync by errno
  timespec done{};
  clock_gettime(CLOCK_REALTIME, &done);
  const char* log = std::getenv("SLOW_FSYNC_LOG");
  if (log != nullptr) log_fsync(log, fd, done);
  errno = error;
  return result;
}
