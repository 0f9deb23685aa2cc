// lib/distributed/make_communicator.cpp — the NCCL factory, with or without the backend built in.
#include "distributed/make_communicator.hpp"

#include <string>

#include "common/error.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/staging_communicator.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/agreed_failure.hpp"
#include "distributed/cuda_devices.hpp"
#include "distributed/nccl_communicator.hpp"
#include "distributed/rank_capability.hpp"
#endif

namespace mnist_ddp::distributed {

bool nccl_built_in() {
#if MNIST_DDP_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_nccl_communicator([[maybe_unused]] const World& world,
                                                     [[maybe_unused]] double timeout_seconds,
                                                     [[maybe_unused]] std::optional<int> device) {
#if MNIST_DDP_HAVE_NCCL
  RankCapability mine;
  mine.node = world.node_id();
  mine.host = world.host();
  mine.nccl_host = nccl_host_id();
  mine.nccl_shares_gpus = nccl_shares_gpus();
  // Agreed first: NcclCommunicator's start-up is collective, and a rank without a device would
  // never reach it. Two ranks on one GPU: NCCL refuses that ("Duplicate GPU detected"), but
  // possibly on some ranks only, leaving the others to wait for the timeout.
  throw_unless_all_succeeded(world.watchdog(), "CUDA device selection", [&] {
    const CudaDevice selected = select_device(
        device ? *device : device_for_local_rank(world.local_rank(), cuda_device_count()));
    mine.gpu = selected.index;
    mine.gpu_text = selected.describe();
    mine.gpu_bus_id = selected.pci_bus_id;
  });
  const std::string shared = shared_gpu_reason(gather_capabilities(world, mine));
  if (!shared.empty()) throw CommError(shared);
  return std::make_unique<NcclCommunicator>(world.watchdog(), mine.gpu, timeout_seconds);
#else
  throw CommError(
      "this build has no NCCL backend (configured with MNIST_DDP_NCCL=OFF or without the CUDA "
      "toolkit)");
#endif
}

std::unique_ptr<Communicator> make_communicator(const World& world, const DevicePlan& plan,
                                                double timeout_seconds) {
  if (plan.backend == config::Backend::kNccl) {
    return std::make_unique<StagingCommunicator>(
        make_nccl_communicator(world, timeout_seconds, plan.device.index()), plan.device);
  }
  auto mpi = std::make_unique<MpiCommunicator>(world.comm(), timeout_seconds);
  if (!plan.on_cuda()) return mpi;
  return std::make_unique<StagingCommunicator>(std::move(mpi), c10::Device(c10::kCPU));
}

}  // namespace mnist_ddp::distributed
