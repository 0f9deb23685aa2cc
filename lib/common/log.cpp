// lib/common/log.cpp — rank-filtered stdout logging.
#include "common/log.hpp"

namespace mnist_ddp {

std::string string_printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list sizing;
  va_copy(sizing, args);
  std::string text(static_cast<size_t>(std::vsnprintf(nullptr, 0, format, sizing)), '\0');
  va_end(sizing);
  std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  return text;
}

void Log::write(const char* before, const char* format, va_list args, const char* after) const {
  std::fputs(before, out_);
  std::vfprintf(out_, format, args);
  std::fputs(after, out_);
  std::fflush(out_);
}

void Log::line(const char* format, ...) const {
  if (!enabled_) return;
  // \r returns to the start of the line; \033[K erases what the live line left.
  if (live_open_) std::fputs("\r\033[K", out_);
  live_open_ = false;
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
  write("\r", format, args, "\033[K");
  va_end(args);
  live_open_ = true;
}

}  // namespace mnist_ddp
