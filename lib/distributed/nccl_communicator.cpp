// lib/distributed/nccl_communicator.cpp — collectives over NCCL on CUDA tensors, with deadlines.
#include "distributed/nccl_communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>

#include <ATen/ATen.h>
#if MNIST_DDP_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/poll_wait.hpp"

namespace mnist_ddp::distributed {
namespace {

// How long the destructor lets ncclCommFinalize take when no (shorter) timeout was given.
constexpr double kTeardownSeconds = 60;

/// For poll_until: whether the communicator's pending call settled, its state left in `state`.
std::function<bool()> settled(ncclComm_t comm, std::mutex& nccl_mutex, ncclResult_t& state) {
  return [comm, &nccl_mutex, &state] {
    state = nccl_async_state(comm, nccl_mutex);
    return state != ncclInProgress;
  };
}

ncclDataType_t nccl_type_of(const at::Tensor& tensor, const char* collective) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kInt:
      return ncclInt32;
    case at::kLong:
      return ncclInt64;
    case at::kBFloat16:
      return ncclBfloat16;
    case at::kHalf:
      return ncclFloat16;
    default:
      throw InternalError(std::string(collective) + ": no NCCL type for " +
                          c10::toString(tensor.scalar_type()));
  }
}

ncclRedOp_t nccl_op_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAverage:
      return ncclAvg;  // NCCL divides by the rank count itself (2.10+)
    case ReduceOp::kMax:
      return ncclMax;
  }
  throw InternalError("unknown ReduceOp " + std::to_string(static_cast<int>(op)));
}

std::string describe(const at::Tensor& tensor) {
  return std::to_string(tensor.numel()) + " " + c10::toString(tensor.scalar_type());
}

}  // namespace

/// An NCCL allreduce in flight, known by its event; must not outlive its communicator.
class NcclCommunicator::Pending final : public PendingCollective {
 public:
  Pending(NcclCommunicator& comm, Event done, at::Tensor tensor, std::string what)
      : comm_(comm), done_(std::move(done)), tensor_(std::move(tensor)), what_(std::move(what)) {}
  ~Pending() override {
    if (!done_) return;
    if (std::uncaught_exceptions() > 0) {
      // On the way to MPI_Abort: don't wait, and keep the tensor NCCL may still write into.
      keep_until_exit(std::make_shared<at::Tensor>(std::move(tensor_)));
      return;
    }
    try {
      comm_.wait_for(done_.get(), "collective (waited for by a destructor)");
    } catch (...) {
      comm_.abort_comm();
    }
  }

  bool test() override {
    if (!done_) return true;
    if (!comm_.test(done_.get(), what_)) return false;
    done_.reset();
    return true;
  }

  /// On the host, returns at once: the caller's stream waits (Note [NCCL watchdog]).
  void wait() override {
    if (!done_) return;
    comm_.hand_over(std::move(done_), what_);
  }

 private:
  NcclCommunicator& comm_;
  Event done_;
  at::Tensor tensor_;  // kept alive while NCCL works on it
  std::string what_;
};

NcclCommunicator::NcclCommunicator(MpiWatchdog& mpi, int device, double timeout_seconds)
    : device_(device), rank_(mpi.rank()), size_(mpi.size()), timeout_seconds_(timeout_seconds) {
  try {
    // On the heap for MpiWatchdog::wait; agreed first, so no rank waits for one that failed.
    const auto id = std::make_shared<ncclUniqueId>();
    run_agreed(mpi, "NCCL set-up on device " + std::to_string(device_), [&] {
      nccl();  // loaded on every rank before the agreement: it may be missing on some
      MDDP_CUDA_CHECK(cuda_runtime().cudaSetDevice(device_));
      stream_ = new_stream();
      caller_ready_ = new_event();
      barrier_buffer_ = new_zeroed_buffer(sizeof(float));
      if (rank_ == 0) MDDP_NCCL_CHECK(nccl().ncclGetUniqueId(id.get()));
    });
    // Collective, as the broadcast is: every rank has agreed to get here.
    PeerFailureWatch peers(mpi.comm());
    MPI_Request broadcast = MPI_REQUEST_NULL;
    MDDP_MPI_CHECK(MPI_Ibcast(id.get(), sizeof *id, MPI_BYTE, 0, mpi.comm(), &broadcast));
    mpi.wait(broadcast, "the broadcast of the NCCL unique id", id);

    // Non-blocking and polled (Note [Set-up failure is agreed while polling]), so a rank that never
    // joins or fails cannot keep the others, unless NCCL_COMM_BLOCKING asks for blocking calls.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    if (std::getenv("NCCL_COMM_BLOCKING") == nullptr) config.blocking = 0;
    settle(
        locked([&] { return nccl().ncclCommInitRankConfig(&comm_, size_, *id, rank_, &config); }),
        "ncclCommInitRankConfig (" + std::to_string(size_) + " ranks, device " +
            std::to_string(device_) + ")",
        &peers);
    watchdog_ =
        std::make_unique<NcclWatchdog>(comm_, nccl_mutex_, rank_, device_, timeout_seconds_);
  } catch (...) {
    release(/*abort=*/true);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() { release(/*abort=*/std::uncaught_exceptions() > 0); }

void NcclCommunicator::release(bool abort) noexcept {
  // First, with nccl_mutex_ free: the watchdog queries the communicator.
  watchdog_.reset();
  if (comm_ != nullptr) {
    bool clean = !abort && !failed_;
    if (clean) {
      // Finalize flushes what is still queued; polled, so a lost peer costs at most the limit.
      ncclResult_t state = locked([&] { return nccl().ncclCommFinalize(comm_); });
      if (state == ncclInProgress) {
        poll_until(settled(comm_, nccl_mutex_, state),
                   std::min(timeout_seconds_, kTeardownSeconds));
      }
      clean = state == ncclSuccess;
    }
    locked([&] { return clean ? nccl().ncclCommDestroy(comm_) : nccl().ncclCommAbort(comm_); });
    comm_ = nullptr;
  }
  captured_events_.clear();
  barrier_buffer_.reset();
  caller_ready_.reset();
  stream_.reset();
}

void NcclCommunicator::abort_comm() noexcept {
  failed_ = true;
  // First, with nccl_mutex_ free: the watchdog queries the communicator.
  watchdog_.reset();
  if (comm_ == nullptr) return;
  locked([&] { return nccl().ncclCommAbort(comm_); });
  comm_ = nullptr;
}

ncclResult_t NcclCommunicator::locked(const std::function<ncclResult_t()>& call) {
  const std::lock_guard<std::mutex> lock(nccl_mutex_);
  return call();
}

void NcclCommunicator::fail(const std::string& what, const std::string& reason) {
  // Text first: aborting may reset NCCL's last-error message.
  std::string message = "NCCL " + what + " on rank " + std::to_string(rank_) + " (device " +
                        std::to_string(device_) + "): " + reason;
  const bool was_open = comm_ != nullptr;
  abort_comm();
  if (was_open) message += "; the NCCL communicator was aborted";
  throw CommError(message);
}

void NcclCommunicator::settle(ncclResult_t result, const std::string& what,
                              PeerFailureWatch* peers) {
  ncclResult_t state = result;
  std::optional<PeerFailure> peer_failure;
  if (state == ncclInProgress) {
    const std::function<bool()> done = settled(comm_, nccl_mutex_, state);
    if (peers == nullptr) {
      poll_until(done, timeout_seconds_);
    } else {
      peer_failure = poll_until(done, timeout_seconds_, *peers).peer_failure;
    }
  }
  if (state == ncclSuccess) return;
  // Note [Set-up failure is agreed while polling]: a peer's earlier failure is the cause.
  if (peers != nullptr && !peer_failure) peer_failure = peers->check();
  if (peer_failure) {
    abort_comm();
    throw CommError("NCCL set-up failed on rank " + std::to_string(peer_failure->rank) + ": " +
                    peer_failure->reason + "; rank " + std::to_string(rank_) +
                    " aborted its NCCL communicator");
  }
  const std::string reason = state == ncclInProgress
                                 ? stall_message(timeout_seconds_, "a rank never joined")
                                 : nccl_error_text(state, comm_);
  // Before fail() aborts, which can take seconds.
  if (peers != nullptr) peers->announce(what + ": " + reason);
  fail(what, reason);
}

void NcclCommunicator::check_tensor(const at::Tensor& tensor, const char* collective) {
  if (failed_) fail(collective, "the communicator was aborted by an earlier error");
  MDDP_INTERNAL_ASSERT(tensor.defined() && tensor.is_cuda() && tensor.device().index() == device_ &&
                           tensor.is_contiguous(),
                       std::string(collective) + " over NCCL needs a contiguous tensor on cuda:" +
                           std::to_string(device_));
}

cudaStream_t NcclCommunicator::caller_stream() const {
#if MNIST_DDP_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_)).stream();
#else
  return nullptr;  // a LibTorch without CUDA runs nothing on a stream of its own
#endif
}

bool NcclCommunicator::capturing() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  MDDP_CUDA_CHECK(cuda_runtime().cudaStreamIsCapturing(caller_stream(), &status));
  return status != cudaStreamCaptureStatusNone;
}

NcclCommunicator::Started NcclCommunicator::enqueue(const std::string& what,
                                                    const std::function<ncclResult_t()>& call) {
  MDDP_CUDA_CHECK(cuda_runtime().cudaEventRecord(caller_ready_.get(), caller_stream()));
  MDDP_CUDA_CHECK(cuda_runtime().cudaStreamWaitEvent(stream_.get(), caller_ready_.get(), 0));
  Started started;
  started.what = what + " (collective #" + std::to_string(++started_) + ")";
  settle(locked(call), started.what);
  started.done = new_event();
  MDDP_CUDA_CHECK(cuda_runtime().cudaEventRecord(started.done.get(), stream_.get()));
  return started;
}

bool NcclCommunicator::test(cudaEvent_t done, const std::string& what) {
  if (failed_) fail(what, "the communicator was aborted by an earlier error");
  if (capturing()) return false;  // Note [Collectives in a captured step]
  const cudaError_t query = cuda_runtime().cudaEventQuery(done);
  if (query == cudaSuccess) {
    MDDP_CUDA_CHECK(cuda_runtime().cudaStreamWaitEvent(caller_stream(), done, 0));
    return true;
  }
  if (query != cudaErrorNotReady) {
    abort_comm();
    MDDP_CUDA_CHECK(query);  // the device's error, not communication's
  }
  const ncclResult_t state = nccl_async_state(comm_, nccl_mutex_);
  if (state != ncclSuccess && state != ncclInProgress) fail(what, nccl_error_text(state, comm_));
  return false;
}

void NcclCommunicator::wait_for(cudaEvent_t done, const std::string& what) {
  if (!poll_until([&] { return test(done, what); }, timeout_seconds_)) {
    fail(what, stall_message(timeout_seconds_, kNcclStalled));
  }
}

void NcclCommunicator::hand_over(Event done, std::string what) {
  if (failed_) fail(what, "the communicator was aborted by an earlier error");
  MDDP_CUDA_CHECK(cuda_runtime().cudaStreamWaitEvent(caller_stream(), done.get(), 0));
  if (capturing()) {  // Note [Collectives in a captured step]
    captured_events_.push_back(std::move(done));
    return;
  }
  watchdog_->watch(std::move(done), std::move(what));
}

void NcclCommunicator::watch_caller_stream(const std::string& what) {
  if (failed_) fail(what, "the communicator was aborted by an earlier error");
  captured_events_.clear();  // the capture that recorded them is over
  Event done = new_event();
  MDDP_CUDA_CHECK(cuda_runtime().cudaEventRecord(done.get(), caller_stream()));
  watchdog_->watch(std::move(done), what);
}

NcclCommunicator::Started NcclCommunicator::start_all_reduce(at::Tensor& tensor, ReduceOp op,
                                                             const char* collective) {
  check_tensor(tensor, collective);
  const ncclDataType_t type = nccl_type_of(tensor, collective);
  MDDP_INTERNAL_ASSERT(op != ReduceOp::kAverage || tensor.is_floating_point(),
                       std::string(collective) + " average of integers");
  return enqueue(std::string(collective) + " of " + describe(tensor), [&] {
    return nccl().ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(),
                                static_cast<size_t>(tensor.numel()), type, nccl_op_of(op), comm_,
                                stream_.get());
  });
}

void NcclCommunicator::finish(Started started) { wait_for(started.done.get(), started.what); }

void NcclCommunicator::all_reduce(at::Tensor& tensor, ReduceOp op) {
  finish(start_all_reduce(tensor, op, "all_reduce"));
}

std::unique_ptr<PendingCollective> NcclCommunicator::all_reduce_async(at::Tensor& tensor,
                                                                      ReduceOp op) {
  Started started = start_all_reduce(tensor, op, "all_reduce_async");
  return std::make_unique<Pending>(*this, std::move(started.done), tensor, std::move(started.what));
}

void NcclCommunicator::broadcast(at::Tensor& tensor, int root) {
  check_tensor(tensor, "broadcast");
  MDDP_INTERNAL_ASSERT(root >= 0 && root < size_, "broadcast root " + std::to_string(root));
  // Bytes, so that every dtype travels.
  finish(enqueue("broadcast of " + describe(tensor) + " from rank " + std::to_string(root), [&] {
    return nccl().ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.nbytes(), ncclUint8,
                                root, comm_, stream_.get());
  }));
}

at::Tensor NcclCommunicator::all_gather(const at::Tensor& tensor) {
  check_tensor(tensor, "all_gather");
  std::vector<std::int64_t> shape = tensor.sizes().vec();
  shape.insert(shape.begin(), size_);
  // Allocated on the caller's stream, so the NCCL stream's wait below also orders it.
  at::Tensor gathered = at::empty(shape, tensor.options());
  finish(enqueue("all_gather of " + describe(tensor), [&] {
    return nccl().ncclAllGather(tensor.data_ptr(), gathered.data_ptr(), tensor.nbytes(), ncclUint8,
                                comm_, stream_.get());
  }));
  return gathered;
}

void NcclCommunicator::barrier() {
  if (failed_) fail("barrier", "the communicator was aborted by an earlier error");
  finish(enqueue("barrier", [&] {
    return nccl().ncclAllReduce(barrier_buffer_.get(), barrier_buffer_.get(), 1, ncclFloat32,
                                ncclSum, comm_, stream_.get());
  }));
}

}  // namespace mnist_ddp::distributed
