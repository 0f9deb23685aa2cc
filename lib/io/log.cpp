// lib/io/log.cpp — rank-filtered stdout logging.
#include "io/log.hpp"

#include <cstdarg>
#include <cstdio>

namespace mnist_ddp::io {

Log::Log(int rank, bool all_ranks) : rank_(rank), enabled_(rank == 0 || all_ranks) {}

void Log::line(const char* format, ...) const {
  if (!enabled_) return;
  if (rank_ != 0) std::printf("[rank %d] ", rank_);
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::putchar('\n');
  std::fflush(stdout);
}

}  // namespace mnist_ddp::io
