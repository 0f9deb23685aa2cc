// lib/train/graphed_step.cpp — the rules of --cuda-graph; the side stream; capture and replay.
#include "train/graphed_step.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "distributed/agreement.hpp"

#if MNIST_DDP_CUDA_GRAPHS
#include <cuda_runtime_api.h>

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#endif

namespace mnist_ddp::train {

// Note [The step as one CUDA graph]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An MNIST step is a few hundred tiny kernels, so it runs as fast as the host launches them; a
// graph launches them all with one call. A replay reruns the same kernels on the same memory, so
// the body reads everything that changes per step from device tensors: the batch position (Note
// [Indices at a device-side position]), the rate and Adam's step (Note [An optimizer step without
// host values]), the stop request, the loss sums; dropout's generator advances per replay. The
// bucket allreduces are captured too (Note [Collectives in a captured step]); staged MPI ones
// cannot be, so plan_cuda_graph keeps MPI runs eager. Eager warm-up steps create lazy state
// (cuBLAS handles, autograd threads) first; partial batches and evaluations run eagerly beside the
// graph. Thread-local capture mode lets the NCCL watchdog keep querying its events meanwhile.

// Note [One stream for a captured training]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Autograd accumulates a parameter's gradient on the stream current when its AccumulateGrad node
// was made, and GradientReducer makes those nodes once; made on the legacy default stream, which
// cannot join a capture, they would fail it. So a captured training runs on one side stream from
// before the reducer is built to its end (as PyTorch asks DDP to be built on the side stream),
// with events ordering it after the work before and before the work after. Eager trainings stay
// on the default stream.

// Note [A failed capture]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A capture may fail on one rank only, and a rank that replays beside eager ones would pair its
// collectives with nothing. So every rank tells whether its capture worked and the first failing
// rank's reason goes to all (Note [One agreement]): all give their graphs up and train eagerly
// from this step, or under --cuda-graph on all stop with that reason. A capture runs no
// collective, so the agreement is the next one on every rank.

namespace {

// Note [Graphed steps rehearsed on the CPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A testing aid, never a default: with MNIST_DDP_REHEARSE_GRAPHS=1 a CPU run takes the graphed
// path, where GraphedStep, having nothing to capture, runs the body eagerly at each "replay" (over
// MPI), so the GPU checks of graphed runs (tests/gpu/multirank.sh) also run on the CPU.
constexpr const char* kRehearsal = "MNIST_DDP_REHEARSE_GRAPHS";

bool rehearsed_on_cpu(const distributed::DevicePlan& plan) {
  const char* value = std::getenv(kRehearsal);
  return !plan.on_cuda() && value != nullptr && std::strcmp(value, "1") == 0;
}

/// Why a step of this run cannot be captured; "" when it can.
std::string why_eager(const config::TrainConfig& config, const distributed::DevicePlan& plan) {
  const bool rehearsal = rehearsed_on_cpu(plan);
  if (!plan.on_cuda() && !rehearsal) return "the run trains on the CPU";
  if (!rehearsal && !cuda_graphs_built()) {
    return "this build cannot capture CUDA graphs (it needs a LibTorch 2.x with CUDA, and "
           "MNIST_DDP_CUDA_GRAPHS not OFF)";
  }
  if (config.mode == config::Mode::kDp) {
    return "--mode dp copies gradients and parameters between GPUs from the host";
  }
  if (config.grad_accum > 1) return "--grad-accum splits a step into micro-batches";
  // Autocast's cast-weight cache would pin the warm-up steps' tensors into the capture.
  if (config.precision != config::Precision::kFp32)
    return "--precision " + config::to_string(config.precision) + " casts under autocast";
  if (!rehearsal && plan.communicates && plan.backend != config::Backend::kNccl) {
    return "gradients travel through host memory over MPI, which no CUDA graph can hold";
  }
  return "";
}

/// A capture that failed for a reason other than the program's own errors.
struct CaptureFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where there is nothing to capture, only a planted failure can fail the capture.
std::string planted_failure(const std::function<void()>& in_capture) {
  try {
    if (in_capture) in_capture();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

GraphPlan plan_cuda_graph(const config::TrainConfig& config, const distributed::DevicePlan& plan) {
  if (config.cuda_graph == config::CudaGraph::kOff) return {false, "--cuda-graph off"};
  const std::string eager = why_eager(config, plan);
  if (eager.empty() && rehearsed_on_cpu(plan)) {
    return {true, std::string("rehearsed on the CPU (") + kRehearsal +
                      "=1): each full-batch step runs the graphed body eagerly"};
  }
  if (eager.empty()) {
    return {true,
            "each full-batch step replays one captured graph (batch, forward, backward, "
            "allreduces, optimizer)"};
  }
  if (config.cuda_graph == config::CudaGraph::kOn) {
    throw UsageError("--cuda-graph on cannot capture this run's steps: " + eager +
                     "; use --cuda-graph auto (eager steps) or off");
  }
  return {false, eager};
}

#if MNIST_DDP_CUDA_GRAPHS

bool cuda_graphs_built() { return true; }

namespace {

/// `device`, or the current CUDA device for an unindexed one.
c10::DeviceIndex device_index(c10::Device device) {
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

/// Orders `after`'s later work after `before`'s work so far, without waiting on the host.
void order(const at::cuda::CUDAStream& before, const at::cuda::CUDAStream& after) {
  at::cuda::CUDAEvent done;
  done.record(before);
  done.block(after);
}

}  // namespace

struct TrainingStream::Switch {
  explicit Switch(c10::DeviceIndex device)
      : previous(at::cuda::getCurrentCUDAStream(device)),
        side(at::cuda::getStreamFromPool(/*isHighPriority=*/false, device)) {
    order(previous, side);
    at::cuda::setCurrentCUDAStream(side);
  }

  ~Switch() {
    at::cuda::setCurrentCUDAStream(previous);
    try {
      order(side, previous);
    } catch (...) {
      // CUDA failed on the way out; the error that ends the run was reported before.
      static_cast<void>(cudaGetLastError());
    }
  }

  at::cuda::CUDAStream previous;  // current before, and again after
  at::cuda::CUDAStream side;
};

TrainingStream::TrainingStream(c10::Device device, bool captured_steps)
    : switch_(captured_steps && device.is_cuda() ? std::make_unique<Switch>(device_index(device))
                                                 : nullptr) {}

struct GraphedStep::Capture {
  Capture(c10::DeviceIndex index, std::function<void()> after_replay)
      : device(index), after_replay(std::move(after_replay)) {
    if (at::cuda::getCurrentCUDAStream(device) == at::cuda::getDefaultCUDAStream(device)) {
      throw Error(ExitCode::kFailure,
                  "GraphedStep on cuda:" + std::to_string(device) +
                      ": a CUDA graph cannot be captured on the default stream; run the "
                      "training on a TrainingStream");
    }
  }

  void capture(const std::function<void()>& body, const std::function<void()>& in_capture) {
    const c10::cuda::CUDAGuard device_guard(device);
    const at::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream(device);
    // What the warm-up launched finishes first: a capture may not overlap work it depends on.
    c10::cuda::device_synchronize();
    try {
      graph.emplace();
      graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      try {
        if (in_capture) in_capture();
        body();
        nodes = captured_nodes(stream);
      } catch (...) {
        abandon(stream);
        throw;
      }
      graph->capture_end();
    } catch (...) {
      graph.reset();
      rethrow_capture_failure();
    }
  }

  /// Rethrows the exception being handled: the program's own errors (and exit codes) as they are.
  [[noreturn]] static void rethrow_capture_failure() {
    try {
      throw;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      // Most likely an operation that CUDA graphs cannot hold (one that waits for the device).
      throw CaptureFailure(e.what());
    }
  }

  /// Ends a capture the body left midway: a stream left capturing fails every later CUDA call on
  /// it, and those errors would hide the one that matters.
  void abandon(const at::cuda::CUDAStream& stream) noexcept {
    try {
      graph->capture_end();  // the stream's capture and, if LibTorch gets that far, the allocator's
    } catch (...) {
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream.stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(stream.stream(), &partial) == cudaSuccess && partial != nullptr) {
        cudaGraphDestroy(partial);
      }
    }
    static_cast<void>(cudaGetLastError());
  }

  /// The nodes of the graph being captured on `stream` so far; 0 where CUDA cannot tell.
  static std::int64_t captured_nodes(const at::cuda::CUDAStream& stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    cudaGraph_t captured = nullptr;
    std::size_t count = 0;
    if (cudaStreamGetCaptureInfo(stream.stream(), &status, &id, &captured) != cudaSuccess ||
        captured == nullptr || cudaGraphGetNodes(captured, nullptr, &count) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());  // a count is not worth failing the run for
      return 0;
    }
    return static_cast<std::int64_t>(count);
  }

  void replay() {
    const c10::cuda::CUDAGuard device_guard(device);
    graph->replay();
    after_replay();
  }

  void release() { graph.reset(); }

  c10::DeviceIndex device;
  std::function<void()> after_replay;
  std::optional<at::cuda::CUDAGraph> graph;
  std::int64_t nodes = 0;  // of the graph, counted at the end of its capture
};

std::unique_ptr<GraphedStep::Capture> GraphedStep::make_capture(
    c10::Device device, std::function<void()> after_replay) {
  return device.is_cuda() ? std::make_unique<Capture>(device_index(device), std::move(after_replay))
                          : nullptr;
}

#else  // LibTorch without CUDA graphs: nothing to capture, nothing to switch

bool cuda_graphs_built() { return false; }

struct TrainingStream::Switch {};

TrainingStream::TrainingStream(c10::Device, bool) {}

struct GraphedStep::Capture {  // never made
  void capture(const std::function<void()>&, const std::function<void()>&) {}
  void replay() {}
  void release() {}
  std::int64_t nodes = 0;
};

std::unique_ptr<GraphedStep::Capture> GraphedStep::make_capture(c10::Device,
                                                                std::function<void()>) {
  return nullptr;
}

#endif

GraphedStep::GraphedStep(std::function<void()> body, c10::Device device,
                         distributed::Communicator& comm, int warmup_steps, bool required,
                         std::function<void()> after_replay)
    : body_(std::move(body)),
      comm_(comm),
      warmups_left_(warmup_steps),
      required_(required),
      capture_(make_capture(device, std::move(after_replay))) {}

std::string GraphedStep::capture(const std::function<void()>& in_capture) {
  if (!capture_) return planted_failure(in_capture);
  try {
    capture_->capture(body_, in_capture);
    return "";
  } catch (const CaptureFailure& e) {
    return e.what();
  }
}

bool GraphedStep::replaying() const { return captured_ && capture_; }

std::int64_t GraphedStep::nodes() const { return captured_ && capture_ ? capture_->nodes : 0; }

bool GraphedStep::run(const std::function<void()>& in_capture) {
  if (warmups_left_ > 0) {
    --warmups_left_;
    body_();
    return true;
  }
  if (!captured_) {
    const std::string mine = capture(in_capture);
    const distributed::Verdict verdict =
        distributed::agree(comm_, mine.empty() ? 0 : static_cast<int>(ExitCode::kFailure), mine);
    if (verdict.failed()) {
      fallback_ = "rank " + std::to_string(verdict.rank) + ": " + verdict.reason;
      if (capture_) capture_->release();
      if (required_) {
        throw Error(ExitCode::kFailure, "capturing the training step as a CUDA graph failed on " +
                                            fallback_ + " (--cuda-graph off trains without one)");
      }
      return false;
    }
    captured_ = true;
  }
  if (capture_) {
    capture_->replay();
  } else {
    body_();  // nothing to capture: the "replay" runs the body eagerly
  }
  return true;
}

TrainingStream::~TrainingStream() = default;

GraphedStep::~GraphedStep() = default;

}  // namespace mnist_ddp::train
