// lib/distributed/nccl_watchdog.hpp — provides: NcclWatchdog, the thread that ends the process when
// an NCCL collective the host no longer waits for runs past the timeout or fails, and
// nccl_async_state, the locked query of NCCL's asynchronous error (only built with the NCCL
// backend).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "distributed/poll_wait.hpp"

namespace mnist_ddp::distributed {

/// Note [NCCL watchdog]. The host does not wait for a gradient bucket's allreduce: waiting only
/// makes the collective's end a precondition of the caller's stream, so the host runs ahead and
/// blocks where it reads a value (a log window's loss). Were a peer to stall or die, that read
/// would block inside CUDA for ever. So a thread watches every collective handed over: when one
/// is still running after the timeout, or NCCL reports an asynchronous error, it prints what
/// and where, aborts the communicator (which ends NCCL's kernels) and ends the process with exit
/// code 5, as PyTorch's NCCL watchdog does; the launcher then ends the other ranks.
/// Why a collective that `waited_seconds` past its deadline is given up: for every NCCL wait.
std::string nccl_stall_reason(double waited_seconds);

/// ncclCommGetAsyncError holding `nccl_mutex` (Note [One thread in NCCL at a time]): the state of
/// `comm`'s work (ncclInProgress while a non-blocking call runs), or the query's own error.
ncclResult_t nccl_async_state(ncclComm_t comm, std::mutex& nccl_mutex);

class NcclWatchdog {
 public:
  /// Watches `comm`, calling NCCL only while holding `nccl_mutex` (Note [One thread in NCCL at a
  /// time]), which must outlive the watchdog.
  NcclWatchdog(ncclComm_t comm, std::mutex& nccl_mutex, int rank, int device,
               double timeout_seconds);
  /// Stops the thread; collectives still watched are no longer checked.
  ~NcclWatchdog();
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;

  /// Watches the collective that ends with `done` (taking ownership of the event).
  void watch(cudaEvent_t done, std::string what);

 private:
  struct Watched {
    cudaEvent_t done;
    std::string what;
    PollClock::time_point since;
  };
  void run() noexcept;
  /// Prints the failure, aborts the communicator and ends the process with `code` (a device's
  /// error: 1), holding nccl_mutex_ to the end.
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
