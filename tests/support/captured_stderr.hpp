// tests/support/captured_stderr.hpp — provides: CapturedStderr, what a scope printed to stderr.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace mnist_ddp::testing {

/// While it lives, file descriptor 2 writes to a file of its own; text() reads it.
class CapturedStderr {
 public:
  CapturedStderr() : path_(temp_path()) {
    std::fflush(stderr);
    saved_ = dup(2);
    std::FILE* file = std::fopen(path_.c_str(), "w");
    dup2(fileno(file), 2);
    std::fclose(file);
  }
  ~CapturedStderr() {
    restore();
    std::remove(path_.c_str());
  }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

  /// Everything printed so far; stderr is the terminal's again from here.
  std::string text() {
    restore();
    std::ifstream in(path_);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  static std::string temp_path() {
    char path[] = "/tmp/mnist_ddp_stderr_XXXXXX";
    close(mkstemp(path));
    return path;
  }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }

  std::string path_;
  int saved_ = -1;
};

}  // namespace mnist_ddp::testing
