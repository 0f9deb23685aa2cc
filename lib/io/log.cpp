// lib/io/log.cpp — rank-filtered stdout logging.
#include "io/log.hpp"

#include <cstdarg>

namespace mnist_ddp::io {

Log::Log(int rank, bool all_ranks, std::FILE* out)
    : rank_(rank), enabled_(rank == 0 || all_ranks), out_(out) {}

void Log::line(const char* format, ...) const {
  if (!enabled_) return;
  end_live();
  if (rank_ != 0) std::fprintf(out_, "[rank %d] ", rank_);
  va_list args;
  va_start(args, format);
  std::vfprintf(out_, format, args);
  va_end(args);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void Log::live(const char* format, ...) const {
  if (!enabled_) return;
  // \r returns to the start of the line; \033[K erases what a longer previous text left.
  std::fputc('\r', out_);
  va_list args;
  va_start(args, format);
  std::vfprintf(out_, format, args);
  va_end(args);
  std::fputs("\033[K", out_);
  std::fflush(out_);
  live_open_ = true;
}

void Log::end_live() const {
  if (!live_open_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  live_open_ = false;
}

}  // namespace mnist_ddp::io
