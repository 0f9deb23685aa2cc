// lib/common/log.hpp — provides: Log (printf-style stdout logging by rank), string_printf.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace mnist_ddp {

/// printf's output as a string, of any length.
std::string string_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

class Log {
 public:
  /// Rank 0 always logs; other ranks only with `all_ranks`. Writes to `out` (tests use a file).
  Log(int rank, bool all_ranks, std::FILE* out = stdout)
      : rank_(rank), enabled_(rank == 0 || all_ranks), out_(out) {}

  /// Writes one formatted line (the newline is added) and flushes, so Slurm logs stay current.
  void line(const char* format, ...) const __attribute__((format(printf, 2, 3)));

  /// Replaces the terminal's live bottom line (no newline); the next line() erases it first.
  void live(const char* format, ...) const __attribute__((format(printf, 2, 3)));

 private:
  void write(const char* before, const char* format, va_list args, const char* after) const;

  int rank_;
  bool enabled_;
  std::FILE* out_;
  mutable bool live_open_ = false;
};

}  // namespace mnist_ddp
