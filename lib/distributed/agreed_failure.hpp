// lib/distributed/agreed_failure.hpp — provides: run_agreed(world, what, phase), the agreed error
// path for phases that every rank runs (option parsing, data loading): a failure on any rank ends
// every rank with the same exit code, and the message is printed once; throw_unless_all_succeeded,
// the same agreement for set-up steps inside the library (communicators); report_error. Every
// agreement is one allreduce waited for under a watchdog (Note [Stall diagnosis]), so a rank that
// never reaches it ends the job after the timeout instead of leaving the others waiting.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "distributed/mpi_watchdog.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Thrown on every rank after a failure that all ranks agreed on; the message has already been
/// printed. `code` is the exit code every rank should return.
struct AgreedFailure : std::runtime_error {
  explicit AgreedFailure(int exit_code) : std::runtime_error("agreed failure"), code(exit_code) {}
  int code;
};

/// Runs `phase` on this rank, then agrees with every rank on whether any failed. If one did, the
/// failing rank with the highest exit code (lowest rank among equals) prints its error and every
/// rank throws AgreedFailure with that code. The agreement waits under the world's watchdog: a
/// rank that never finishes `phase` ends the job with exit 5 after --comm-timeout, and the
/// message names it, its host and `what` ("loading the data"). A CommTimeout inside `phase` is
/// thrown on at once: the rank it names would not join the agreement either.
void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase);

/// Collective over `watched`'s communicator: runs `step` on this rank and returns when it
/// succeeded on every rank. Otherwise every rank throws: a failed rank its own error, the others
/// an Error "<what> failed on rank R" with R's exit code (the highest, then the lowest rank, as
/// in run_agreed). Keeps the healthy ranks from waiting forever in a later collective that the
/// failed ones never reach; a rank that never gets here ends the others' wait with CommTimeout.
void throw_unless_all_succeeded(MpiWatchdog& watched, const std::string& what,
                                const std::function<void()>& step);

/// Prints "mnist_ddp: error: <label> <what>" to stderr, with a --help hint for usage errors, and
/// returns the exit code that `error` maps to; `label` is World::label() or process_label().
int report_error(const std::string& label, const std::exception& error);

}  // namespace mnist_ddp::distributed
