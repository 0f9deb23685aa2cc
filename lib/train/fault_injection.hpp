// lib/train/fault_injection.hpp — provides: FaultInjector, MNIST_DDP_FAULT's planted failures.
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

enum class FaultPhase {
  kAfterStep,  // after the optimizer step `step`
  kLoad,       // while loading the data, before any training
  kCapture,    // inside the capture of the training step as a CUDA graph
};

struct Fault {
  int rank = 0;
  std::int64_t step = 1;
  FaultPhase phase = FaultPhase::kAfterStep;
  FaultKind kind = FaultKind::kThrow;
};

/// Parses "rank=R,step=S,kind=K" or "rank=R,phase=load|capture,kind=K" (K: throw, abort, exit,
/// hang or stop; any order). Throws UsageError naming the variable and the problem.
Fault parse_fault(const std::string& text);

class FaultInjector {
 public:
  /// Reads MNIST_DDP_FAULT; unset or empty means no fault. Throws UsageError when malformed.
  FaultInjector(int rank, std::string host);

  /// After each optimizer step: fails in the planned way when this is the rank and the step.
  void after_step(std::int64_t step) const;
  /// While loading the data: fails in the planned way when this is the rank and phase=load.
  void while_loading() const;
  /// Inside the capture of the training step: fails when this is the rank and phase=capture.
  void while_capturing() const;

 private:
  bool planned(FaultPhase phase) const;
  /// Fails in the planned way; `when` ends the message ("after step 25").
  void fail(const std::string& when) const;

  int rank_;
  std::string host_;
  std::optional<Fault> fault_;
};

}  // namespace mnist_ddp::train
