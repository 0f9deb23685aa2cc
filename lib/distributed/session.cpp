// lib/distributed/session.cpp — the plan, then its communicator, with or without NCCL built in.
#include "distributed/session.hpp"

#include <ATen/Parallel.h>

#include "distributed/agreement.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/staging_communicator.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#include "distributed/nccl_communicator.hpp"
#endif

namespace mnist_ddp::distributed {

bool nccl_built_in() {
#if MNIST_DDP_HAVE_NCCL
  return true;
#else
  return false;
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
      // Agreed first: a rank without the device would never reach the collective start-up.
      run_agreed(world, "CUDA device selection", [&] { select_device(plan.device.index()); });
      auto nccl = std::make_unique<NcclCommunicator>(world.watchdog(), plan.device.index(),
                                                     request.comm_timeout);
      session.after_replay = [watched = nccl.get()] {
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
