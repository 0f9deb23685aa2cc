// lib/distributed/nccl_communicator.hpp — provides: NcclCommunicator; NCCL builds only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/communicator.hpp"
#include "distributed/gpu_libraries.hpp"
#include "distributed/mpi_watchdog.hpp"
#include "distributed/nccl_watchdog.hpp"
#include "distributed/peer_failure.hpp"

namespace mnist_ddp::distributed {

// Note [NCCL stream ordering]. NCCL runs on its own stream so bucket allreduces overlap backward.
// An event on the caller's stream (LibTorch's current one, read at each call) makes NCCL wait for
// the tensor's producer; waiting, or a test that finds it done, makes the caller's stream wait for
// the collective's event.

// Note [One thread in NCCL at a time]. NCCL allows one thread per communicator, but the training
// (or autograd) thread and the watchdog both call ours: every NCCL call on comm_ holds nccl_mutex_.
// It is never held while sleeping or joining the watchdog, which takes it inside its queue lock,
// never the other way round, and after aborting keeps it until the process ends.

// Note [Collectives in a captured step]. Allreduces enqueued while the caller's stream captures
// a step (Note [The step as one CUDA graph]) join the graph and rerun at every replay. Events
// recorded in a capture must not be queried, so while capturing nothing is tested or watched; after
// each replay watch_caller_stream gives the watchdog an event behind the replay instead.

/// One rank per GPU, each on the device it selected beforehand.
class NcclCommunicator final : public Communicator {
 public:
  /// Collective over `mpi` (used only here); makes `device` current. A wait past `timeout_seconds`
  /// or an NCCL error aborts and throws CommError.
  NcclCommunicator(MpiWatchdog& mpi, int device,
                   double timeout_seconds = std::numeric_limits<double>::infinity());
  /// Finalizes, or aborts after a failure, a timeout or during unwinding: never hangs.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }

  /// float, double, int32, int64, bfloat16, float16; kAverage (ncclAvg) on floating types only.
  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  /// Any dtype (the bytes travel).
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  void barrier() override;

  /// After a replay: watch an event on the caller's stream (Note [Collectives in a captured step]).
  void watch_caller_stream(const std::string& what);

 private:
  class Pending;  // what all_reduce_async returns; nested, to reach the waits below

  struct Started {
    Event done;
    std::string what;
  };
  /// LibTorch's current stream on device_ (Note [NCCL stream ordering]).
  cudaStream_t caller_stream() const;
  /// Whether the caller's stream is being captured (Note [Collectives in a captured step]).
  bool capturing() const;
  /// Enqueues `call` on stream_ after the caller's work (Note [NCCL stream ordering]).
  Started enqueue(const std::string& what, const std::function<ncclResult_t()>& call);

  /// Polls for `done` and async errors, then orders the caller's stream after it.
  void wait_for(cudaEvent_t done, const std::string& what);
  /// Once true, the caller's stream is ordered after `done`; throws as wait_for does.
  bool test(cudaEvent_t done, const std::string& what);
  /// Orders the caller's stream after `done` with no host wait; the watchdog takes the event.
  void hand_over(Event done, std::string what);
  /// CommError once failed; InternalError unless a contiguous CUDA tensor on device_.
  void check_tensor(const at::Tensor& tensor, const char* collective);
  /// Polls while ncclInProgress; aborts and throws on an error, shared with `peers` at set-up.
  void settle(ncclResult_t result, const std::string& what, PeerFailureWatch* peers = nullptr);
  /// Note [One thread in NCCL at a time].
  ncclResult_t locked(const std::function<ncclResult_t()>& call);
  /// Aborts the communicator (once) and throws CommError "<what> on rank R: <reason>".
  [[noreturn]] void fail(const std::string& what, const std::string& reason);
  void abort_comm() noexcept;
  Started start_all_reduce(at::Tensor& tensor, ReduceOp op, const char* collective);
  /// Waits for a collective just started and releases its event.
  void finish(Started started);
  /// Aborts instead of finalizing when `abort`.
  void release(bool abort) noexcept;

  ncclComm_t comm_ = nullptr;
  Stream stream_;                           // the communicator's own stream
  Event caller_ready_;                      // re-recorded on the caller's stream per collective
  DeviceBuffer barrier_buffer_;             // one float on the device, for barrier()
  std::mutex nccl_mutex_;                   // Note [One thread in NCCL at a time]
  std::unique_ptr<NcclWatchdog> watchdog_;  // from the end of initialisation until release
  int device_ = 0;
  int rank_ = 0;
  int size_ = 1;
  double timeout_seconds_;
  std::int64_t started_ = 0;            // collectives started, for error messages
  bool failed_ = false;                 // aborted after an error: nothing may be enqueued any more
  std::vector<Event> captured_events_;  // waited for in a capture; released at a replay
};

}  // namespace mnist_ddp::distributed
