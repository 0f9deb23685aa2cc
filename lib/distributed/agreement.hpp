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

// Note [One agreement]. Every failure that must end every rank alike goes through agree(): one
// max picks the highest exit code and, among equal codes, the lowest rank, whose reason then goes
// to all; over MPI at start-up, over the run's Communicator after. That rank alone prints; every
// rank throws AgreedFailure, which run_program turns into the exit code. A reason only its rank
// prints is not broadcast, which keeps the collective paired with those of peers that gave up on a
// late rank (Note [Stall diagnosis]). What cannot wait ends the job (Note [Ending the job]).

/// `code` 0 when all succeeded, else the highest exit code, the lowest rank with it, its reason.
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

/// Its rank prints "<label> <reason>", every rank throws AgreedFailure.
[[noreturn]] void end_agreed(const Verdict& verdict, int rank, const std::string& label);

/// Runs `phase`, then agrees on how it went (end_agreed). AgreedFailure and CommTimeout pass
/// through: every rank saw the first; the rank a timeout names would not join.
void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase);
/// run_agreed over `watched`'s communicator.
void run_agreed(MpiWatchdog& watched, const std::string& what, const std::function<void()>& phase);

/// Collective: `root`'s bytes on every rank; other ranks' argument is ignored.
std::string broadcast_bytes(const World& world, const std::string& bytes, int root = 0);
std::string broadcast_bytes(Communicator& comm, const std::string& bytes, int root = 0);

/// Collective, inside run_agreed: UsageError naming the first option that differs from rank 0's
/// (nearly every option shapes the collectives).
void check_same_options(const World& world, const config::TrainConfig& config);

/// Starts the World and returns `program`'s exit code, or an AgreedFailure's; any other error is
/// printed ("<program>: error: <label> <what>") and ends every rank (abort_job).
int run_program(int* argc, char*** argv, const std::function<int(World&)>& program);

}  // namespace mnist_ddp::distributed
