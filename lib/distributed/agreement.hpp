// lib/distributed/agreement.hpp — provides: Verdict, agree, run_agreed, broadcast_bytes,
// check_same_options, run_program.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "config/train_config.hpp"
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

/// Collective: UsageError naming the first option that differs from rank 0's, as nearly every
/// option shapes the collectives. --data-dir may differ (the data are compared once loaded).
/// Run it inside run_agreed.
void check_same_options(const World& world, const config::TrainConfig& config);

/// Starts the World and returns `program`'s exit code, or an AgreedFailure's. Any other error,
/// the World's start-up included, is reported ("<program>: error: <label> <what>", plus a --help
/// hint for usage errors) and ends every rank (abort_job).
int run_program(int* argc, char*** argv, const std::function<int(World&)>& program);

}  // namespace mnist_ddp::distributed
