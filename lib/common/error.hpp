// lib/common/error.hpp — provides: ExitCode, Error and its kinds, MDDP_INTERNAL_ASSERT.
#pragma once

#include <stdexcept>
#include <string>

namespace mnist_ddp {

/// Process exit codes, documented in the README; scripts and Slurm act on them.
enum class ExitCode : int {
  kOk = 0,
  kFailure = 1,     // anything else, including a final accuracy below --min-accuracy
  kUsage = 2,       // bad option or configuration
  kData = 3,        // missing or malformed data
  kCheckpoint = 4,  // bad checkpoint
  kComm = 5,        // communication failure or timeout
  kPreempted = 6,   // stopped by SIGTERM/SIGUSR1 after writing a checkpoint; resume to continue
  kNotFinite = 8,   // a training loss that is not finite: stopped, no checkpoint written after it
};

/// An error that knows which exit code it ends the program with.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// A bad option value, unknown option or contradictory configuration.
struct UsageError : Error {
  explicit UsageError(const std::string& message) : Error(ExitCode::kUsage, message) {}
};

/// Missing, unreadable or malformed data files.
struct DataError : Error {
  explicit DataError(const std::string& message) : Error(ExitCode::kData, message) {}
};

/// A checkpoint that is missing, damaged or does not fit the run.
struct CheckpointError : Error {
  explicit CheckpointError(const std::string& message) : Error(ExitCode::kCheckpoint, message) {}
};

/// A failed collective or communicator set-up.
struct CommError : Error {
  explicit CommError(const std::string& message) : Error(ExitCode::kComm, message) {}
};

/// A state the program's own code rules out: a bug, never the user's doing (exit code 1).
struct InternalError : Error {
  explicit InternalError(const std::string& message)
      : Error(ExitCode::kFailure, "internal error: " + message) {}
};

}  // namespace mnist_ddp

/// Throws InternalError "<message> @ <file>:<line>" unless `condition`, as TORCH_INTERNAL_ASSERT.
#define MDDP_INTERNAL_ASSERT(condition, message)                                     \
  if (condition) {                                                                   \
  } else                                                                             \
    throw ::mnist_ddp::InternalError(std::string(message) + " @ " + __FILE__ + ":" + \
                                     std::to_string(__LINE__))
