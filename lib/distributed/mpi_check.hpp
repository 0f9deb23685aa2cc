// lib/distributed/mpi_check.hpp — provides: MDDP_MPI_CHECK, a CommError naming call, text and site.
#pragma once

#include <mpi.h>

namespace mnist_ddp::distributed {

void check_mpi(int result, const char* expression, const char* file, int line);

}  // namespace mnist_ddp::distributed

#define MDDP_MPI_CHECK(expr) ::mnist_ddp::distributed::check_mpi((expr), #expr, __FILE__, __LINE__)
