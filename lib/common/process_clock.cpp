// lib/common/process_clock.cpp — /proc/self/stat's start time against CLOCK_BOOTTIME, its clock.
#include "common/process_clock.hpp"

#include <ctime>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace mnist_ddp {

double seconds_since_process_start() {
  std::ifstream file("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Field 22: start in ticks since boot; count from the last ')', as names may hold spaces.
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return 0;
  std::size_t position = name_end + 2;
  for (int field = 3; field < 22 && position != std::string::npos; ++field) {
    position = stat.find(' ', position);
    if (position != std::string::npos) ++position;
  }
  if (position == std::string::npos) return 0;
  const double started = std::stod(stat.substr(position)) / sysconf(_SC_CLK_TCK);
  timespec now{};
  clock_gettime(CLOCK_BOOTTIME, &now);
  return now.tv_sec + now.tv_nsec * 1e-9 - started;
}

}  // namespace mnist_ddp
