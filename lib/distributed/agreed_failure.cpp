// lib/distributed/agreed_failure.cpp — one MPI_Allreduce (MAXLOC) decides the exit code and the
// reporter.
#include "distributed/agreed_failure.hpp"

#include <cerrno>  // program_invocation_short_name (GNU)
#include <climits>
#include <cstdio>
#include <optional>
#include <string>

#include <c10/util/Exception.h>

#include "common/error.hpp"
#include "distributed/mpi_check.hpp"

namespace mnist_ddp::distributed {

int report_error(const World& world, const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  const ExitCode code = known != nullptr ? known->code() : ExitCode::kFailure;
  // LibTorch's errors carry a C++ backtrace in what(); the first line says what went wrong.
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  const char* what = torch_error != nullptr ? torch_error->what_without_backtrace() : error.what();
  // The program's own name: mnist_ddp or allreduce_bench.
  const char* program = program_invocation_short_name;
  std::fprintf(stderr, "%s: error: %s %s\n", program, world.label().c_str(), what);
  if (code == ExitCode::kUsage) std::fprintf(stderr, "Try '%s --help'.\n", program);
  std::fflush(stderr);
  return static_cast<int>(code);
}

void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase) {
  std::optional<Error> failure;
  int local_code = 0;
  try {
    phase();
  } catch (const Error& e) {
    failure.emplace(e);
    local_code = static_cast<int>(e.code());
  } catch (const std::exception& e) {
    failure.emplace(ExitCode::kFailure, e.what());
    local_code = static_cast<int>(ExitCode::kFailure);
  }

  // MAXLOC picks the highest code and, among equal codes, the lowest rank: one reporter.
  struct {
    int code;
    int rank;
  } local{local_code, world.rank()}, agreed{0, 0};
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallreduce(&local, &agreed, 1, MPI_2INT, MPI_MAXLOC, world.comm(), &request));
  world.wait(request, "the agreement after " + what);
  if (agreed.code == 0) return;
  if (agreed.rank == world.rank()) report_error(world, *failure);
  throw AgreedFailure(agreed.code);
}

void throw_unless_all_succeeded(MPI_Comm comm, const std::string& local_error,
                                const std::string& step) {
  int rank = 0;
  MDDP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const int local = local_error.empty() ? INT_MAX : rank;
  int first_failed = INT_MAX;
  MDDP_MPI_CHECK(MPI_Allreduce(&local, &first_failed, 1, MPI_INT, MPI_MIN, comm));
  if (first_failed == INT_MAX) return;
  if (!local_error.empty()) throw CommError(local_error);
  throw CommError(step + " failed on rank " + std::to_string(first_failed) +
                  " (its error says why)");
}

}  // namespace mnist_ddp::distributed
