// lib/distributed/nccl_watchdog.cpp — polls watched events and NCCL's asynchronous error.
#include "distributed/nccl_watchdog.hpp"

#include <cstdio>

#include "distributed/world.hpp"

namespace mnist_ddp::distributed {
namespace {

// How often the thread looks; a stalled collective is reported at most this late.
constexpr std::chrono::milliseconds kPollInterval(100);

}  // namespace

ncclResult_t nccl_async_state(ncclComm_t comm, std::mutex& nccl_mutex) {
  ncclResult_t state = ncclSuccess;
  const std::lock_guard<std::mutex> lock(nccl_mutex);
  const ncclResult_t result = nccl().ncclCommGetAsyncError(comm, &state);
  return result != ncclSuccess ? result : state;
}

NcclWatchdog::NcclWatchdog(ncclComm_t comm, std::mutex& nccl_mutex, int rank, int device,
                           double timeout_seconds)
    : comm_(comm),
      nccl_mutex_(nccl_mutex),
      rank_(rank),
      device_(device),
      timeout_seconds_(timeout_seconds),
      thread_([this] { run(); }) {}

NcclWatchdog::~NcclWatchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void NcclWatchdog::watch(Event done, std::string what) {
  const std::lock_guard<std::mutex> lock(mutex_);
  watched_.push_back({std::move(done), std::move(what), PollClock::now()});
}

void NcclWatchdog::run() noexcept {
  cuda_runtime().cudaSetDevice(device_);  // events and NCCL queries of this rank's device
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kPollInterval, [this] { return stopping_; })) {
    while (!watched_.empty()) {
      const Watched& oldest = watched_.front();
      const cudaError_t query = cuda_runtime().cudaEventQuery(oldest.done.get());
      if (query == cudaSuccess) {
        watched_.pop_front();
        continue;
      }
      if (query != cudaErrorNotReady) {
        give_up(oldest.what,
                std::string("cudaEventQuery: ") + cuda_runtime().cudaGetErrorString(query),
                ExitCode::kFailure);
      }
      const double waited = seconds_since(oldest.since);
      if (waited > timeout_seconds_) give_up(oldest.what, stall_message(waited, kNcclStalled));
      break;
    }
    const ncclResult_t state = nccl_async_state(comm_, nccl_mutex_);
    if (state != ncclSuccess && state != ncclInProgress) {
      give_up(watched_.empty() ? "collective" : watched_.front().what,
              nccl_error_text(state, comm_));
    }
  }
}

void NcclWatchdog::give_up(const std::string& what, const std::string& reason,
                           ExitCode code) noexcept {
  std::fprintf(stderr,
               "mnist_ddp: error: [rank %d] NCCL %s on rank %d (device %d): %s; the NCCL "
               "communicator was aborted\n",
               rank_, what.c_str(), rank_, device_, reason.c_str());
  std::fflush(stderr);
  // Never released: no thread may enter the aborted communicator.
  nccl_mutex_.lock();
  nccl().ncclCommAbort(comm_);
  abort_job(static_cast<int>(code), /*from_main_thread=*/false);
}

}  // namespace mnist_ddp::distributed
