// lib/io/log.hpp — provides: Log, printf-style logging to stdout by rank 0 only (or by every
// rank, prefixed with its rank, when asked).
#pragma once

namespace mnist_ddp::io {

class Log {
 public:
  /// Rank 0 always logs; other ranks only with `all_ranks`.
  Log(int rank, bool all_ranks);

  bool enabled() const { return enabled_; }

  /// Writes one formatted line (the newline is added) and flushes, so Slurm logs stay current.
  void line(const char* format, ...) const __attribute__((format(printf, 2, 3)));

 private:
  int rank_;
  bool enabled_;
};

}  // namespace mnist_ddp::io
