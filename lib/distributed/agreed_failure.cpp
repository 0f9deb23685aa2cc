// lib/distributed/agreed_failure.cpp — one watched MPI_Iallreduce (MAXLOC) picks code and reporter.
#include "distributed/agreed_failure.hpp"

#include <array>
#include <cerrno>  // program_invocation_short_name (GNU)
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <c10/util/Exception.h>

#include "common/error.hpp"
#include "distributed/mpi_check.hpp"

namespace mnist_ddp::distributed {
namespace {

/// MAXLOC picks the highest code and, among equal codes, the lowest rank.
struct Verdict {
  int code = 0;
  int rank = 0;
};

/// Agrees on every rank's `local_code` under the watchdog; `what` names the wait in a CommTimeout.
Verdict agree(MpiWatchdog& watched, int local_code, const std::string& what) {
  int rank = 0;
  MDDP_MPI_CHECK(MPI_Comm_rank(watched.comm(), &rank));
  // Mine, then the agreed one; shared so the buffers outlive an abandoned wait.
  const auto verdicts = std::make_shared<std::array<Verdict, 2>>();
  (*verdicts)[0] = Verdict{local_code, rank};
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallreduce(&(*verdicts)[0], &(*verdicts)[1], 1, MPI_2INT, MPI_MAXLOC,
                                watched.comm(), &request));
  watched.wait(request, what, verdicts);
  return (*verdicts)[1];
}

ExitCode exit_code(const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  return known != nullptr ? known->code() : ExitCode::kFailure;
}

}  // namespace

int report_error(const std::string& label, const std::exception& error) {
  const ExitCode code = exit_code(error);
  // LibTorch's errors carry a C++ backtrace in what(); the first line says what went wrong.
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  const char* what = torch_error != nullptr ? torch_error->what_without_backtrace() : error.what();
  const char* program = program_invocation_short_name;
  std::fprintf(stderr, "%s: error: %s %s\n", program, label.c_str(), what);
  if (code == ExitCode::kUsage) std::fprintf(stderr, "Try '%s --help'.\n", program);
  std::fflush(stderr);
  return static_cast<int>(code);
}

void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase) {
  std::optional<Error> failure;
  int local_code = 0;
  try {
    phase();
  } catch (const CommTimeout&) {
    throw;
  } catch (const Error& e) {
    failure.emplace(e);
    local_code = static_cast<int>(e.code());
  } catch (const std::exception& e) {
    failure.emplace(ExitCode::kFailure, e.what());
    local_code = static_cast<int>(ExitCode::kFailure);
  }
  const Verdict agreed = agree(world.watchdog(), local_code, "the agreement after " + what);
  if (agreed.code == 0) return;
  if (agreed.rank == world.rank()) report_error(world.label(), *failure);
  throw AgreedFailure(agreed.code);
}

void throw_unless_all_succeeded(MpiWatchdog& watched, const std::string& what,
                                const std::function<void()>& step) {
  std::exception_ptr failure;
  int local_code = 0;
  try {
    step();
  } catch (const std::exception& e) {
    failure = std::current_exception();
    local_code = static_cast<int>(exit_code(e));
  }
  const Verdict agreed = agree(watched, local_code, "the agreement after " + what);
  if (agreed.code == 0) return;
  if (failure) std::rethrow_exception(failure);
  throw Error(static_cast<ExitCode>(agreed.code),
              what + " failed on rank " + std::to_string(agreed.rank) + " (its error says why)");
}

}  // namespace mnist_ddp::distributed
