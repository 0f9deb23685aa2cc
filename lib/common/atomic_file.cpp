// lib/common/atomic_file.cpp — temporary file, fsync, rename, fsync of the folder.
#include "common/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include "common/error.hpp"

namespace mnist_ddp {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw Error(ExitCode::kFailure, what + " '" + path + "' failed: " + std::strerror(errno));
}

/// Note [File modes]: mode 0666, not mkstemp's forced 0600, so the umask decides, as elsewhere.
/// Creates `<prefix><pid>.<n>` with O_EXCL, trying the next n past a crashed process's leftover.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& prefix) {
    for (int attempt = 0;; ++attempt) {
      path_ = prefix + std::to_string(getpid()) + "." + std::to_string(attempt);
      fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST || attempt == kAttempts) fail("creating", path_);
    }
  }
  ~TemporaryFile() {
    if (fd_ >= 0) close(fd_);
    if (!renamed_) unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  void close_checked() {
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) fail("closing", path_);
  }
  void mark_renamed() { renamed_ = true; }

 private:
  static constexpr int kAttempts = 1000;
  std::string path_;
  int fd_ = -1;
  bool renamed_ = false;
};

void write_all(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t written = write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("writing", path);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

void require_writable_folder(const std::string& folder, const std::string& what) {
  if (!std::filesystem::is_directory(folder)) {
    throw UsageError(what + ": folder '" + folder + "' does not exist");
  }
  try {
    const TemporaryFile probe(folder + "/.mnist_ddp-write-check.");
  } catch (const Error& e) {
    throw UsageError(what + ": " + e.what());
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  const std::filesystem::path target(path);
  const std::string folder =
      target.has_parent_path() ? target.parent_path().string() : std::string(".");
  TemporaryFile temporary(folder + "/." + target.filename().string() + ".tmp.");
  write_all(temporary.fd(), contents, temporary.path());
  if (fsync(temporary.fd()) != 0) fail("syncing", temporary.path());
  temporary.close_checked();
  if (rename(temporary.path().c_str(), path.c_str()) != 0) fail("renaming into", path);
  temporary.mark_renamed();

  const int directory = open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (directory < 0) fail("opening the folder", folder);
  const int synced = fsync(directory);
  close(directory);
  if (synced != 0) fail("syncing the folder", folder);
}

}  // namespace mnist_ddp
