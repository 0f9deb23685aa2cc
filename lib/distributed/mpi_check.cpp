// lib/distributed/mpi_check.cpp — MPI result checking.
#include "distributed/mpi_check.hpp"

#include <array>
#include <string>

#include "common/error.hpp"

namespace mnist_ddp::distributed {

void check_mpi(int result, const char* expression, const char* file, int line) {
  if (result == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(result, text.data(), &length);
  throw CommError(std::string(expression) + " failed: " + std::string(text.data(), length) + " @ " +
                  file + ":" + std::to_string(line));
}

}  // namespace mnist_ddp::distributed
