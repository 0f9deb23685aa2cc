// tests/support/nccl_comm.cpp — device selection, the shared-GPU check and the communicator, with
// or without NCCL built in.
#include "support/nccl_comm.hpp"

#include <string>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/device_plan.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#include "distributed/nccl_communicator.hpp"
#endif

namespace mnist_ddp::testing {

std::unique_ptr<distributed::Communicator> make_nccl_communicator(
    [[maybe_unused]] const distributed::World& world, [[maybe_unused]] double timeout_seconds,
    [[maybe_unused]] std::optional<int> device) {
#if MNIST_DDP_HAVE_NCCL
  distributed::RankCapability mine;
  mine.node = world.node_id();
  mine.host = world.host();
  mine.nccl_host = distributed::nccl_host_id();
  mine.nccl_shares_gpus = distributed::nccl_shares_gpus();
  // Two ranks on one GPU: NCCL refuses that ("Duplicate GPU detected"), but possibly on some ranks
  // only, leaving the others to wait for the timeout.
  distributed::run_agreed(world, "CUDA device selection", [&] {
    const distributed::CudaDevice selected = distributed::select_device(
        device ? *device : world.local_rank() % distributed::cuda_device_count());
    mine.gpu = selected.index;
    mine.gpu_text = selected.describe();
    mine.gpu_bus_id = selected.pci_bus_id;
  });
  const std::string shared =
      distributed::shared_gpu_reason(distributed::gather_capabilities(world, mine));
  if (!shared.empty()) throw CommError(shared);
  return std::make_unique<distributed::NcclCommunicator>(world.watchdog(), mine.gpu,
                                                         timeout_seconds);
#else
  throw CommError(
      "this build has no NCCL backend (configured with MNIST_DDP_NCCL=OFF or without the CUDA "
      "toolkit)");
#endif
}

}  // namespace mnist_ddp::testing
