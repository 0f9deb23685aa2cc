// lib/common/log.hpp — provides: Log, printf-style stdout logging by rank 0 (or every rank).
#pragma once

#include <cstdarg>
#include <cstdio>

namespace mnist_ddp {

class Log {
 public:
  /// Rank 0 always logs; other ranks only with `all_ranks`. Writes to `out` (tests use a file).
  Log(int rank, bool all_ranks, std::FILE* out = stdout);

  /// Writes one formatted line (the newline is added) and flushes, so Slurm logs stay current.
  void line(const char* format, ...) const __attribute__((format(printf, 2, 3)));

  /// Replaces the terminal's live bottom line (no newline); the next line() erases it first.
  void live(const char* format, ...) const __attribute__((format(printf, 2, 3)));
  /// Erases the live line, if any.
  void end_live() const;

 private:
  void write(const char* before, const char* format, va_list args, const char* after) const;

  int rank_;
  bool enabled_;
  std::FILE* out_;
  mutable bool live_open_ = false;
};

}  // namespace mnist_ddp
