// lib/distributed/agreement.hpp — provides: Verdict, agree, run_agreed, broadcast_bytes,
// report_error.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "distributed/communicator.hpp"
#include "distributed/mpi_watchdog.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

// Note [One agreement]. Every failure that must end every rank alike goes through agree(): each
// rank gives its exit code (0: fine) and reason; one max picks the highest code and, among equal
// codes, the lowest rank; that rank's reason, of any length, then goes to all. It runs over MPI
// (start-up, before a communicator exists) or over the run's Communicator (capture fallback,
// stop requests, a loss that is not finite), so NCCL runs agree on the device they train on. The
// verdict's rank alone prints; every rank throws AgreedFailure, which run_program turns into the
// exit code. The reason travels only where every rank uses it: a verdict whose rank prints it
// costs one collective, which keeps it paired with that of peers that gave up on a late rank
// (Note [Stall diagnosis]). What cannot wait for an agreement ends the job (Note [Ending the job]).

/// What every rank agreed on: `code` 0 when all succeeded, else the highest exit code, the lowest
/// rank that gave it and that rank's reason (on every rank where shared, else on that one).
struct Verdict {
  int code = 0;
  int rank = 0;
  std::string reason;
  bool failed() const { return code != 0; }
};

/// Collective over MPI under `watched`'s deadline; `what` names the wait in a CommTimeout.
Verdict agree(MpiWatchdog& watched, int code, const std::string& reason, const std::string& what,
              bool share_reason = true);
/// Collective over `comm`.
Verdict agree(Communicator& comm, int code, const std::string& reason, bool share_reason = true);

/// Thrown on every rank after an agreed failure, already printed; `code` is the exit code.
struct AgreedFailure : std::runtime_error {
  explicit AgreedFailure(int exit_code) : std::runtime_error("agreed failure"), code(exit_code) {}
  int code;
};

/// Ends a failed verdict: its rank prints "<label> <reason>" (Note [One agreement]), every rank
/// throws AgreedFailure.
[[noreturn]] void end_agreed(const Verdict& verdict, int rank, const std::string& label);

/// Runs `phase` on every rank, then agrees on how it went; a failure ends as end_agreed says. An
/// AgreedFailure or a CommTimeout from `phase` passes through: every rank saw the first, and the
/// rank a timeout names would not join the agreement.
void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase);
/// run_agreed over `watched`'s communicator.
void run_agreed(MpiWatchdog& watched, const std::string& what, const std::function<void()>& phase);

/// Collective: `root`'s bytes on every rank; other ranks' argument is ignored.
std::string broadcast_bytes(const World& world, const std::string& bytes, int root = 0);
std::string broadcast_bytes(Communicator& comm, const std::string& bytes, int root = 0);

/// Prints "<program>: error: <label> <what>" (plus a --help hint for usage errors) to stderr and
/// returns `error`'s exit code.
int report_error(const std::string& label, const std::exception& error);

}  // namespace mnist_ddp::distributed
