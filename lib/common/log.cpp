// lib/common/log.cpp — rank-filtered stdout logging.
#include "common/log.hpp"

#include <cstdarg>

namespace mnist_ddp {

Log::Log(int rank, bool all_ranks, std::FILE* out)
    : rank_(rank), enabled_(rank == 0 || all_ranks), out_(out) {}

void Log::write(const char* before, const char* format, va_list args, const char* after) const {
  std::fputs(before, out_);
  std::vfprintf(out_, format, args);
  std::fputs(after, out_);
  std::fflush(out_);
}

void Log::line(const char* format, ...) const {
  if (!enabled_) return;
  end_live();
  if (rank_ != 0) std::fprintf(out_, "[rank %d] ", rank_);
  va_list args;
  va_start(args, format);
  write("", format, args, "\n");
  va_end(args);
}

void Log::live(const char* format, ...) const {
  if (!enabled_) return;
  va_list args;
  va_start(args, format);
  // \r returns to the start of the line; \033[K erases what a longer previous text left.
  write("\r", format, args, "\033[K");
  va_end(args);
  live_open_ = true;
}

void Log::end_live() const {
  if (!live_open_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  live_open_ = false;
}

}  // namespace mnist_ddp
