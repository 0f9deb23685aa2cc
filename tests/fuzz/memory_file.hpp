// tests/fuzz/memory_file.hpp — provides: MemoryFile, a fuzz input as an in-memory file with a path
// (/proc/self/fd/N of a memfd), for readers that only take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace mnist_ddp::fuzz {

/// The bytes of one fuzz input as an anonymous in-memory file. The path opens it afresh (own
/// offset), as a disk file would, but nothing touches the disk and nothing is left behind.
class MemoryFile {
 public:
  MemoryFile(const void* data, std::size_t size) : fd_(memfd_create("fuzz_input", MFD_CLOEXEC)) {
    // No error type of ours fits a broken harness: stop the fuzzer loudly.
    if (fd_ < 0) std::abort();
    const auto* bytes = static_cast<const char*>(data);
    for (std::size_t done = 0; done < size;) {
      const ssize_t wrote = write(fd_, bytes + done, size - done);
      if (wrote <= 0) std::abort();
      done += static_cast<std::size_t>(wrote);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace mnist_ddp::fuzz
