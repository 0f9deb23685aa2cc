// lib/distributed/nccl_watchdog.hpp — provides: NcclWatchdog, nccl_async_state.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "distributed/gpu_libraries.hpp"
#include "distributed/poll_wait.hpp"

namespace mnist_ddp::distributed {

/// Note [NCCL watchdog]. The host only orders its stream after bucket allreduces, so a stalled
/// peer would block a later read inside CUDA for ever. A thread watches each collective handed
/// over; past the timeout or on an async NCCL error it prints, aborts the communicator and ends the
/// job with 5 (Note [Ending the job]), as PyTorch's watchdog does.

/// Why an NCCL collective waits past --comm-timeout, for stall_message.
inline constexpr const char* kNcclStalled = "a rank stalled, died or called another collective";

/// ncclCommGetAsyncError under `nccl_mutex`, or the query's own error.
ncclResult_t nccl_async_state(ncclComm_t comm, std::mutex& nccl_mutex);

class NcclWatchdog {
 public:
  /// `nccl_mutex` must outlive the watchdog.
  NcclWatchdog(ncclComm_t comm, std::mutex& nccl_mutex, int rank, int device,
               double timeout_seconds);
  /// Stops the thread; collectives still watched are no longer checked.
  ~NcclWatchdog();
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;

  void watch(Event done, std::string what);

 private:
  struct Watched {
    Event done;
    std::string what;
    PollClock::time_point since;
  };
  void run() noexcept;
  /// Prints, aborts and ends the job with `code`, holding nccl_mutex_ to the end.
  [[noreturn]] void give_up(const std::string& what, const std::string& reason,
                            ExitCode code = ExitCode::kComm) noexcept;

  ncclComm_t comm_;
  std::mutex& nccl_mutex_;  // the communicator's: taken for every NCCL call
  int rank_;
  int device_;
  double timeout_seconds_;
  std::mutex mutex_;  // guards the fields below; taken before nccl_mutex_, never after it
  std::condition_variable wake_;
  std::deque<Watched> watched_;  // in the order they were started, so the oldest is first
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything above is ready
};

}  // namespace mnist_ddp::distributed
