// lib/distributed/session.cpp — the plan, then its communicator, with or without NCCL built in.
#include "distributed/session.hpp"

#include <string>

#include <ATen/Parallel.h>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/staging_communicator.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#include "distributed/nccl_communicator.hpp"
#include "distributed/rank_capability.hpp"
#endif

namespace mnist_ddp::distributed {
namespace {

#if MNIST_DDP_HAVE_NCCL
/// Collective: selects `device` on every rank, agreed first: NcclCommunicator's start-up is
/// collective, and a rank without the device would never reach it.
std::unique_ptr<NcclCommunicator> open_nccl(const World& world, double timeout_seconds,
                                            int device) {
  run_agreed(world, "CUDA device selection", [&] { select_device(device); });
  return std::make_unique<NcclCommunicator>(world.watchdog(), device, timeout_seconds);
}
#endif

}  // namespace

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
  // Two ranks on one GPU: NCCL refuses that ("Duplicate GPU detected"), but possibly on some ranks
  // only, leaving the others to wait for the timeout.
  run_agreed(world, "CUDA device selection", [&] {
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

Session open_session(const World& world, const config::DeviceRequest& request) {
  Session session;
  run_agreed(world, "planning the devices", [&] { session.plan = plan_devices(request, world); });
  at::set_num_threads(session.plan.layout[world.rank()].threads);
  const DevicePlan& plan = session.plan;
  run_agreed(world, "setting up the communicator", [&] {
#if MNIST_DDP_HAVE_NCCL
    if (plan.backend == config::Backend::kNccl) {
      // The plan refused shared GPUs and chose this rank's device from every rank's capability.
      std::unique_ptr<NcclCommunicator> nccl =
          open_nccl(world, request.comm_timeout, plan.device.index());
      NcclCommunicator* watched = nccl.get();
      session.after_replay = [watched] {
        watched->watch_caller_stream("replay of the captured training step");
      };
      session.communicator = std::make_unique<StagingCommunicator>(std::move(nccl), plan.device);
      return;
    }
#endif
    auto mpi = std::make_unique<MpiCommunicator>(world.comm(), request.comm_timeout);
    session.communicator = plan.on_cuda() ? std::make_unique<StagingCommunicator>(
                                                std::move(mpi), c10::Device(c10::kCPU))
                                          : std::unique_ptr<Communicator>(std::move(mpi));
  });
  return session;
}

}  // namespace mnist_ddp::distributed
