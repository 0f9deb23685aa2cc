// lib/train/graph_plan.cpp — the rules of --cuda-graph.
#include "train/graph_plan.hpp"

#include <cstdlib>
#include <cstring>

#include "common/error.hpp"
#include "train/graphed_step.hpp"

namespace mnist_ddp::train {
namespace {

// Note [Graphed steps rehearsed on the CPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A testing aid, never a default: with MNIST_DDP_REHEARSE_GRAPHS=1 a CPU run takes the graphed
// path, where GraphedStep, having nothing to capture, runs the step's body eagerly at each
// "replay". So the GPU checks of graphed runs (tests/gpu/multirank.sh) reach their verdicts on
// the CPU: the banner, the launch and device phases, a planted capture failure agreed across
// ranks, faults during replays. Over MPI, which stands in for NCCL there.
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

}  // namespace mnist_ddp::train
