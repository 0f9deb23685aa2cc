// lib/distributed/nccl_communicator.hpp — provides: NcclCommunicator, the Communicator over NCCL
// for contiguous CUDA tensors, bootstrapped over MPI (only built with the NCCL backend).
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/communicator.hpp"
#include "distributed/mpi_watchdog.hpp"
#include "distributed/nccl_watchdog.hpp"
#include "distributed/peer_failure.hpp"

namespace mnist_ddp::distributed {

// Note [NCCL stream ordering]. NCCL runs on a stream of the communicator's own, so a bucket's
// allreduce can overlap the backward pass that still runs on the caller's stream. Before each
// collective an event recorded on the caller's stream makes the NCCL stream wait for the work
// that produced the tensor; when the collective is waited for (or tested done), the caller's
// stream waits for the collective's event, so the work that reads the result comes after it. The
// caller's stream is LibTorch's current stream on the communicator's device, read at each call as
// PyTorch's ProcessGroupNCCL does: CUDA's legacy default stream unless a stream guard says
// otherwise (a captured training's side stream, TrainingStream in lib/train/graphed_step.hpp);
// the gradient hooks that start the bucket allreduces run on the stream autograd gives them.

// Note [One thread in NCCL at a time]. NCCL lets one thread at a time call into a communicator,
// but two reach ours: the thread that trains (the main thread, or LibTorch's autograd thread
// that starts bucket allreduces during backward) and the watchdog (Note [NCCL watchdog]), which
// asks for asynchronous errors and aborts. So, as PyTorch's ProcessGroupNCCL does, every NCCL call
// on comm_ holds nccl_mutex_: the collectives, ncclCommGetAsyncError (nccl_async_state),
// initialisation, finalize, destroy and abort. The communicator is non-blocking, so each call
// returns quickly and holding the lock around it costs nothing. The lock is never held while
// sleeping between polls, nor while the watchdog thread is joined (abort_comm and release stop
// the watchdog first, with the lock free); the watchdog takes it inside its own queue's lock, and
// nothing takes them the other way round. When the watchdog aborts, it keeps the lock until the
// process ends, so no thread enters the aborted communicator. ncclGetLastError reads a
// process-wide message, not the communicator, and takes no lock.

// Note [Collectives in a captured step]. A training step captured as a CUDA graph (Note [The
// step as one CUDA graph] in lib/train/graphed_step.cpp) holds its bucket allreduces: enqueued
// during the capture as usual, they join it through the caller's stream (the events of Note
// [NCCL stream ordering] become the graph's edges), and every replay runs them again. Events
// recorded inside a capture belong to it: querying one is an error, and its end on the host
// means nothing for later replays. So while the caller's stream is capturing (asked at each call)
// a collective is never tested done, waiting for it only orders the caller's stream after it, and
// nothing goes to the watchdog; after each replay, watch_caller_stream gives the watchdog an event
// recorded behind the replay, whose end is the end of the replay's collectives, so a peer that
// stalls in a replayed step still ends the job within the timeout.

/// Communicator over NCCL: one rank per GPU, every rank on the device it selected beforehand.
class NcclCommunicator final : public Communicator {
 public:
  /// Collective over `mpi`'s communicator, whose watchdog the set-up's MPI collectives wait
  /// under (only while constructing): rank 0 creates the NCCL unique id, a broadcast hands it over
  /// and every rank joins on CUDA device `device` (made current here). Initialisation, and any
  /// collective waited for, that take longer than `timeout_seconds` abort the NCCL communicator
  /// and throw CommError, as does an asynchronous NCCL error. Initialisation that fails on one
  /// rank ends it on every rank within moments (Note [Set-up failure is agreed while polling]).
  NcclCommunicator(MpiWatchdog& mpi, int device,
                   double timeout_seconds = std::numeric_limits<double>::infinity());
  /// Finalizes and destroys the NCCL communicator, or aborts it when it failed, when waiting
  /// would pass the timeout, or when an exception is on its way: never hangs.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }
  /// The CUDA device this rank's communicator runs on.
  int device() const { return device_; }

  /// Supports float, double, int32, int64, bfloat16 and float16; kAverage on floating types only
  /// (ncclAvg, no division afterwards).
  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  /// Any dtype (the bytes travel).
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  /// A one-element allreduce, waited for.
  void barrier() override;

  /// Has the watchdog watch an event recorded now on the caller's stream, named `what`: a replay
  /// of a captured step (Note [Collectives in a captured step]).
  void watch_caller_stream(const std::string& what);

 private:
  /// An allreduce in flight (what all_reduce_async returns); reaches the waits below.
  class Pending;

  /// A collective enqueued: the event that marks its end (owned by the receiver) and its name.
  struct Started {
    cudaEvent_t done = nullptr;
    std::string what;
  };
  /// LibTorch's current stream on device_ (Note [NCCL stream ordering]).
  cudaStream_t caller_stream() const;
  /// Whether the caller's stream is being captured (Note [Collectives in a captured step]).
  bool capturing() const;
  /// Enqueues `call` (an NCCL collective on stream_) after the caller's work so far (Note [NCCL
  /// stream ordering]), names it "<what> (collective #N)" and records the event that ends it.
  Started enqueue(const std::string& what, const std::function<ncclResult_t()>& call);

  /// Waits for `done` (recorded after collective `what`), polling NCCL for asynchronous errors,
  /// then orders the caller's stream after it. Throws CommError after aborting the communicator
  /// on an error or when `timeout_seconds` pass.
  void wait_for(cudaEvent_t done, const std::string& what);
  /// Whether `done` has happened (then the caller's stream is ordered after it); throws as
  /// wait_for does on an asynchronous error.
  bool test(cudaEvent_t done, const std::string& what);
  /// Like wait_for, for destructors: on any failure aborts the communicator and returns false.
  bool wait_quietly(cudaEvent_t done) noexcept;
  /// Orders the caller's stream after `done` without waiting on the host, and hands the event
  /// (with its ownership) to the watchdog (Note [NCCL watchdog]).
  void hand_over(cudaEvent_t done, std::string what);
  /// Throws CommError once the communicator failed; InternalError unless `tensor` is a contiguous
  /// CUDA tensor on this rank's device.
  void check_tensor(const at::Tensor& tensor, const char* collective);
  /// Settles the result of an NCCL call on the non-blocking communicator: polls while it is
  /// ncclInProgress; aborts and throws on an error. With `peers` (during set-up), announces this
  /// rank's failure to them, and gives up on a failure they announce (Note [Set-up failure is
  /// agreed while polling]).
  void settle(ncclResult_t result, const std::string& what, PeerFailureWatch* peers = nullptr);
  /// Makes `call`, one NCCL call on comm_, holding nccl_mutex_ (Note [One thread in NCCL at a
  /// time]); returns its result.
  ncclResult_t locked(const std::function<ncclResult_t()>& call);
  /// Aborts the communicator (once) and throws CommError "<what> on rank R: <reason>".
  [[noreturn]] void fail(const std::string& what, const std::string& reason);
  void abort_comm() noexcept;
  /// Starts the allreduce after checking `tensor` and `op`.
  Started start_all_reduce(at::Tensor& tensor, ReduceOp op, const char* collective);
  /// Waits for a collective just started and releases its event.
  void finish(const Started& started);
  /// Releases everything; aborts the NCCL communicator instead of finalizing it when `abort`.
  void release(bool abort) noexcept;

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;           // the communicator's own stream
  cudaEvent_t caller_ready_ = nullptr;      // re-recorded on the caller's stream per collective
  void* barrier_buffer_ = nullptr;          // one float on the device, for barrier()
  std::mutex nccl_mutex_;                   // Note [One thread in NCCL at a time]
  std::unique_ptr<NcclWatchdog> watchdog_;  // from the end of initialisation until release
  int device_ = 0;
  int rank_ = 0;
  int size_ = 1;
  double timeout_seconds_;
  std::int64_t started_ = 0;  // collectives started, for error messages
  bool failed_ = false;       // aborted after an error: nothing may be enqueued any more
  std::vector<cudaEvent_t> captured_events_;  // waited for in a capture; released at a replay
};

}  // namespace mnist_ddp::distributed
