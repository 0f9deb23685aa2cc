// lib/train/graphed_step.cpp — warm-up, capture and replay of one training step.
#include "train/graphed_step.hpp"

#include <optional>
#include <string>

#if MNIST_DDP_CUDA_GRAPHS
#include <cuda_runtime_api.h>

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "common/error.hpp"
#endif
#if MNIST_DDP_CUDA_GRAPHS && MNIST_DDP_HAVE_NCCL
#include "distributed/nccl_communicator.hpp"
#endif

namespace mnist_ddp::train {

// Note [The step as one CUDA graph]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// On a GPU an MNIST step is a few hundred small kernels whose arithmetic takes microseconds:
// the step is as fast as the host can launch them and run the allocator and autograd in
// between. A CUDA graph records the kernels of one step once and launches them all with one
// call. What a replay runs is fixed at capture: the same kernels on the same memory with the
// same arguments. So the captured body reads every value that changes between steps from a
// tensor the host updates before the replay, or the graph updates itself:
// - the batch: indices gathered at a position kept on the device (Note [Indices at a
//   device-side position]), from the data set already on the GPU;
// - the learning rate and Adam's step count (Note [An optimizer step without host values]);
// - the stop request riding on the gradients (GradientReducer::request_stop);
// - the loss sums (Trainer::sum_loss; the host counts the replays);
// - dropout's random numbers: LibTorch's CUDA generator advances its offset per replay.
// The gradient buckets, parameters and optimizer state keep their memory from step to step, so
// the capture's addresses stay right; the step's temporaries live in the graph's own memory
// pool. The bucket allreduces are captured with the step (Note [Collectives in a captured step]
// in nccl_communicator.hpp); collectives staged through host memory cannot be, so
// plan_cuda_graph keeps MPI runs eager. A few eager warm-up steps come first, on the capture's
// stream, so that lazily created state (optimizer state, cuBLAS handles, autograd's device
// threads) exists before the capture. Steps of another shape (an epoch's last partial batch)
// and evaluations run eagerly beside the graph. The capture uses CUDA's thread-local mode: the
// NCCL watchdog's thread keeps querying the events of earlier collectives meanwhile.

#if MNIST_DDP_CUDA_GRAPHS

bool cuda_graphs_built() { return true; }

struct GraphedStep::Capture {
  Capture(c10::DeviceIndex device_index, distributed::Communicator& comm)
      : device(device_index),
        stream(at::cuda::getStreamFromPool(/*isHighPriority=*/false, device_index))
#if MNIST_DDP_HAVE_NCCL
        ,
        nccl(dynamic_cast<distributed::NcclCommunicator*>(&comm))
#endif
  {
    static_cast<void>(comm);
  }

  /// Runs `work` on the capture's stream, ordered after the caller's stream's work so far and
  /// before its later work; collectives follow the stream.
  template <typename Work>
  void on_capture_stream(const Work& work) {
    const c10::cuda::CUDAGuard device_guard(device);
    const at::cuda::CUDAStream caller = at::cuda::getCurrentCUDAStream(device);
    at::cuda::CUDAEvent ready;
    ready.record(caller);
    ready.block(stream);
    {
      const at::cuda::CUDAStreamGuard guard(stream);
      set_collective_stream(stream.stream());
      try {
        work();
      } catch (...) {
        set_collective_stream(caller.stream());
        throw;
      }
      set_collective_stream(caller.stream());
    }
    at::cuda::CUDAEvent done;
    done.record(stream);
    done.block(caller);
  }

  void set_collective_stream(cudaStream_t s) {
#if MNIST_DDP_HAVE_NCCL
    if (nccl != nullptr) nccl->set_caller_stream(s);
#endif
    static_cast<void>(s);
  }

  void capture(const std::function<void()>& body) {
    // What the warm-up launched finishes first: a capture may not overlap work it depends on.
    const c10::cuda::CUDAGuard device_guard(device);
    c10::cuda::device_synchronize();
    try {
      on_capture_stream([&] {
#if MNIST_DDP_HAVE_NCCL
        if (nccl != nullptr) nccl->begin_capture();
#endif
        graph.emplace();
        graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        try {
          body();
        } catch (...) {
          end_collective_capture();
          throw;
        }
        nodes = captured_nodes();
        graph->capture_end();
        end_collective_capture();
      });
    } catch (const Error&) {
      throw;  // the program's own errors keep their exit codes (a collective's is 5)
    } catch (const std::exception& e) {
      // Most likely an operation that CUDA graphs cannot hold (one that waits for the device).
      throw Error(ExitCode::kFailure,
                  "capturing the training step as a CUDA graph failed (--cuda-graph off trains "
                  "without one): " +
                      std::string(e.what()));
    }
  }

  /// The nodes of the graph being captured on `stream` so far; 0 where CUDA cannot tell.
  std::int64_t captured_nodes() const {
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

  void end_collective_capture() {
#if MNIST_DDP_HAVE_NCCL
    if (nccl != nullptr) nccl->end_capture();
#endif
  }

  void replay() {
    const c10::cuda::CUDAGuard device_guard(device);
    graph->replay();
#if MNIST_DDP_HAVE_NCCL
    // Note [Collectives in a captured step]: the watchdog watches the replay's end.
    if (nccl != nullptr) nccl->watch_caller_stream("replay of the captured training step");
#endif
  }

  c10::DeviceIndex device;
  at::cuda::CUDAStream stream;
  std::optional<at::cuda::CUDAGraph> graph;
  std::int64_t nodes = 0;  // of the graph, counted at the end of its capture
#if MNIST_DDP_HAVE_NCCL
  distributed::NcclCommunicator* nccl = nullptr;
#endif
};

GraphedStep::GraphedStep(std::function<void()> body, c10::Device device,
                         distributed::Communicator& comm, int warmup_steps)
    : body_(std::move(body)),
      warmups_left_(warmup_steps),
      capture_(device.is_cuda() ? std::make_unique<Capture>(device.index(), comm) : nullptr) {}

void GraphedStep::run() {
  if (!capture_) {
    body_();
  } else if (warmups_left_ > 0) {
    --warmups_left_;
    capture_->on_capture_stream(body_);
  } else {
    if (!capture_->graph) capture_->capture(body_);
    capture_->replay();
  }
}

bool GraphedStep::replaying() const { return capture_ && capture_->graph.has_value(); }

std::int64_t GraphedStep::nodes() const { return capture_ ? capture_->nodes : 0; }

#else  // LibTorch without CUDA graphs: nothing to capture

bool cuda_graphs_built() { return false; }

struct GraphedStep::Capture {};

GraphedStep::GraphedStep(std::function<void()> body, c10::Device, distributed::Communicator&,
                         int warmup_steps)
    : body_(std::move(body)), warmups_left_(warmup_steps) {}

void GraphedStep::run() { body_(); }

bool GraphedStep::replaying() const { return false; }

std::int64_t GraphedStep::nodes() const { return 0; }

#endif

GraphedStep::~GraphedStep() = default;

}  // namespace mnist_ddp::train
