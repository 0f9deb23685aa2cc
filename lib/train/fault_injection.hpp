// lib/train/fault_injection.hpp — provides: FaultInjector, a testing aid that makes one rank fail
// in a chosen way after a chosen step or while loading the data, from the MNIST_DDP_FAULT
// environment variable, so tests can prove that every kind of failure ends the whole job promptly
// and loses nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mnist_ddp::train {

enum class FaultKind {
  kThrow,  // an exception, as any error inside the program
  kAbort,  // std::abort: killed by SIGABRT, as a crash
  kExit,   // the process exits (code 7) without a word to MPI, as a rank that vanishes
  kHang,   // alive but never takes part again, as a deadlock
  kStop,   // SIGSTOP: stalled, as a rank whose node froze
};

struct Fault {
  int rank = 0;
  std::int64_t step = 1;       // after this optimizer step
  bool while_loading = false;  // instead: while loading the data, before any training
  FaultKind kind = FaultKind::kThrow;
};

/// Parses "rank=R,step=S,kind=K" or "rank=R,phase=load,kind=K" (K: throw, abort, exit, hang or
/// stop; any order). Throws UsageError naming the variable and the problem.
Fault parse_fault(const std::string& text);

class FaultInjector {
 public:
  /// Reads MNIST_DDP_FAULT; unset or empty means no fault. Throws UsageError when malformed.
  FaultInjector(int rank, std::string host);

  /// After each optimizer step: fails in the planned way when this is the rank and the step.
  void after_step(std::int64_t step) const;
  /// While loading the data: fails in the planned way when this is the rank and phase=load.
  void while_loading() const;

 private:
  /// Fails in the planned way; `when` ends the message ("after step 25").
  void fail(const std::string& when) const;

  int rank_;
  std::string host_;
  std::optional<Fault> fault_;
};

}  // namespace mnist_ddp::train
