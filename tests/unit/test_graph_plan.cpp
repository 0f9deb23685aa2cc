// tests/unit/test_graph_plan.cpp — plan_cuda_graph: which runs capture their steps, why the others
// run eagerly under auto, and that on is refused for them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "common/error.hpp"
#include "train/graphed_step.hpp"

namespace mnist_ddp::train {
namespace {

using config::Backend;

distributed::DevicePlan cuda_plan(Backend backend, bool communicates = true) {
  distributed::DevicePlan plan;
  plan.device = c10::Device(c10::kCUDA, 0);
  plan.backend = backend;
  plan.communicates = communicates;
  return plan;
}

/// auto's reason for running `config` eagerly; "captured" when it captures.
std::string auto_decision(config::TrainConfig config, const distributed::DevicePlan& plan) {
  config.cuda_graph = config::CudaGraph::kAuto;
  const GraphPlan graphs = plan_cuda_graph(config, plan);
  return graphs.capture ? "captured" : graphs.reason;
}

/// on's refusal of `config`; "" when it captures.
std::string on_refusal(config::TrainConfig config, const distributed::DevicePlan& plan) {
  config.cuda_graph = config::CudaGraph::kOn;
  GraphPlan graphs;
  try {
    graphs = plan_cuda_graph(config, plan);
  } catch (const UsageError& e) {
    return e.what();
  }
  CHECK(graphs.capture);
  return "";
}

TEST_CASE("plan_cuda_graph: off, and the CPU, never capture") {
  config::TrainConfig config;
  config.cuda_graph = config::CudaGraph::kOff;
  CHECK_FALSE(plan_cuda_graph(config, cuda_plan(Backend::kNccl)).capture);
  const distributed::DevicePlan cpu{};
  CHECK(auto_decision(config, cpu) == "the run trains on the CPU");
  const std::string refused = on_refusal(config, cpu);
  CHECK(refused.find("--cuda-graph on cannot capture this run's steps: the run trains on the "
                     "CPU; use --cuda-graph auto (eager steps) or off") != std::string::npos);
}

TEST_CASE("plan_cuda_graph: MNIST_DDP_REHEARSE_GRAPHS=1 takes the graphed path on the CPU only") {
  ::setenv("MNIST_DDP_REHEARSE_GRAPHS", "1", /*overwrite=*/1);
  config::TrainConfig config;
  distributed::DevicePlan mpi_cpu;
  mpi_cpu.backend = Backend::kMpi;
  mpi_cpu.communicates = true;
  CHECK(auto_decision(config, mpi_cpu) == "captured");
  CHECK(on_refusal(config, mpi_cpu).empty());
  config.cuda_graph = config::CudaGraph::kOn;
  CHECK(plan_cuda_graph(config, mpi_cpu).reason.find("rehearsed on the CPU") == 0);
  // What a capture could not hold stays eager in the rehearsal too.
  config.grad_accum = 2;
  CHECK(auto_decision(config, mpi_cpu) == "--grad-accum splits a step into micro-batches");
  ::setenv("MNIST_DDP_REHEARSE_GRAPHS", "0", /*overwrite=*/1);
  CHECK(auto_decision(config::TrainConfig{}, mpi_cpu) == "the run trains on the CPU");
  ::unsetenv("MNIST_DDP_REHEARSE_GRAPHS");
}

TEST_CASE("plan_cuda_graph: CUDA steps are captured unless something in them cannot be" *
          doctest::skip(!cuda_graphs_built())) {
  const config::TrainConfig plain;
  CHECK(auto_decision(plain, cuda_plan(Backend::kNccl)) == "captured");
  CHECK(on_refusal(plain, cuda_plan(Backend::kNccl)).empty());
  // Ranks that do not communicate (one, without --communicate-alone) send nothing: MPI is no
  // obstacle there.
  CHECK(auto_decision(plain, cuda_plan(Backend::kMpi, /*communicates=*/false)) == "captured");

  struct Case {
    const char* what;
    config::TrainConfig config;
    Backend backend;
    const char* reason;
  };
  config::TrainConfig dp = plain, accum = plain, bf16 = plain;
  dp.mode = config::Mode::kDp;
  accum.grad_accum = 4;
  bf16.precision = config::Precision::kBf16;
  const Case cases[] = {
      {"dp", dp, Backend::kMpi,
       "--mode dp copies gradients and parameters between GPUs from the host"},
      {"grad-accum", accum, Backend::kNccl, "--grad-accum splits a step into micro-batches"},
      {"bf16", bf16, Backend::kNccl, "--precision bf16 casts under autocast"},
      {"mpi", plain, Backend::kMpi,
       "gradients travel through host memory over MPI, which no CUDA graph can hold"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(auto_decision(c.config, cuda_plan(c.backend)) == c.reason);
    CHECK(on_refusal(c.config, cuda_plan(c.backend)).find(c.reason) != std::string::npos);
  }
}

TEST_CASE("plan_cuda_graph: a build without CUDA graphs runs CUDA steps eagerly, saying so" *
          doctest::skip(cuda_graphs_built())) {
  const config::TrainConfig plain;
  const std::string reason =
      "this build cannot capture CUDA graphs (it needs a LibTorch 2.x with CUDA, and "
      "MNIST_DDP_CUDA_GRAPHS not OFF)";
  CHECK(auto_decision(plain, cuda_plan(Backend::kNccl)) == reason);
  CHECK(on_refusal(plain, cuda_plan(Backend::kNccl)).find(reason) != std::string::npos);
}

}  // namespace
}  // namespace mnist_ddp::train
