// lib/distributed/device_plan.cpp — device, backend and replicas from the options and the machine.
#include "distributed/device_plan.hpp"

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "common/error.hpp"
#include "distributed/make_communicator.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#endif

namespace mnist_ddp::distributed {
namespace {

/// "cuda:1 (NVIDIA H100, 0000:18:00.0)" where the CUDA runtime is linked in, else "cuda:1".
std::string describe_cuda_device(int index) {
#if MNIST_DDP_HAVE_NCCL
  return cuda_device(index).describe();
#else
  return "cuda:" + std::to_string(index);
#endif
}

}  // namespace

std::string cuda_unavailable_reason() {
  if (!at::hasCUDA()) {
    return "this LibTorch (" TORCH_VERSION
           ") was built without CUDA; build mnist_ddp against a "
           "CUDA LibTorch (tests/gpu/run.sh shows how)";
  }
  if (torch::cuda::device_count() > 0) return "";
  std::string reason = "no CUDA device is visible to this process";
#if MNIST_DDP_HAVE_NCCL
  try {
    cuda_device_count();  // throws with the CUDA runtime's own reason
  } catch (const std::exception& e) {
    reason += " (" + std::string(e.what()) + ")";
  }
#endif
  return reason + "; check nvidia-smi and CUDA_VISIBLE_DEVICES";
}

DevicePlan plan_devices(const config::TrainConfig& config, const World& world) {
  const bool dp = config.mode == "dp";
  const bool wants_cuda = config.device == "cuda" || config.backend == "nccl" || dp;
  const std::string why_not = config.device == "cpu" ? "" : cuda_unavailable_reason();
  if (wants_cuda && !why_not.empty()) {
    const std::string what = dp                        ? "--mode dp drives GPUs and needs CUDA"
                             : config.device == "cuda" ? "--device cuda"
                                                       : "--backend nccl needs a CUDA device";
    throw UsageError(
        what + ": " + why_not +
        (dp ? ". Without GPUs train data-parallel over MPI: mpirun -np N mnist_ddp" : ""));
  }
  if (dp && world.size() > 1) {
    throw UsageError("--mode dp runs as one process that drives every visible GPU, but " +
                     std::to_string(world.size()) +
                     " ranks were started: run it without mpirun (or with -np 1), or use "
                     "--mode ddp for one rank per GPU");
  }

  DevicePlan plan;
  if (config.device == "cpu" || !why_not.empty()) {
    plan.backend = "mpi";
    plan.device_text = "cpu";
    return plan;
  }
  const int visible = static_cast<int>(torch::cuda::device_count());
  const int index = dp ? 0 : world.local_rank() % visible;
  plan.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  plan.device_text = describe_cuda_device(index);
  if (dp) {
    for (int d = 0; d < visible; ++d) {
      plan.replicas.emplace_back(c10::kCUDA, static_cast<c10::DeviceIndex>(d));
    }
    plan.device_text += visible > 1 ? " + " + std::to_string(visible - 1) + " more GPU(s)" : "";
  }
  if (config.backend == "nccl" && !nccl_built_in()) {
    throw UsageError(
        "--backend nccl: this build has no NCCL backend (configure with the CUDA toolkit and "
        "NCCL, -DMNIST_DDP_NCCL=ON)");
  }
  // NCCL needs a GPU of its own per rank: with more ranks on a node than GPUs, auto takes MPI
  // (an explicit --backend nccl is refused on every rank when the communicator starts).
  const bool nccl = config.backend == "nccl" ||
                    (config.backend == "auto" && nccl_built_in() && world.local_size() <= visible);
  plan.backend = nccl && !dp ? "nccl" : "mpi";
  return plan;
}

}  // namespace mnist_ddp::distributed
