// lib/distributed/agreed_failure.hpp — provides: run_agreed, throw_unless_all_succeeded.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "distributed/mpi_watchdog.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// Thrown on every rank after an agreed failure, already printed; `code` is the exit code.
struct AgreedFailure : std::runtime_error {
  explicit AgreedFailure(int exit_code) : std::runtime_error("agreed failure"), code(exit_code) {}
  int code;
};

/// Runs `phase`, then agrees: the failed rank with the highest code (lowest rank among equals)
/// prints its error and every rank throws AgreedFailure. A rank that never finishes ends the job
/// with exit 5 after --comm-timeout, naming `what`. A CommTimeout in `phase` is rethrown at once:
/// the rank it names would not join the agreement either.
void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase);

/// Collective: runs `step`; returns if it succeeded everywhere, else a failed rank rethrows its
/// error and the others throw "<what> failed on rank R" with R's code (chosen as in run_agreed).
void throw_unless_all_succeeded(MpiWatchdog& watched, const std::string& what,
                                const std::function<void()>& step);

/// Prints "<program>: error: <label> <what>" (plus a --help hint for usage errors) to stderr and
/// returns `error`'s exit code.
int report_error(const std::string& label, const std::exception& error);

}  // namespace mnist_ddp::distributed
