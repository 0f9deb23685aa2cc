// lib/distributed/make_communicator.cpp — the NCCL factory, with or without the backend built in.
#include "distributed/make_communicator.hpp"

#include <exception>
#include <string>

#include "common/error.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/staging_communicator.hpp"

#if MNIST_DDP_HAVE_NCCL
#include <array>
#include <cstring>
#include <vector>

#include "distributed/agreed_failure.hpp"
#include "distributed/cuda_devices.hpp"
#include "distributed/mpi_check.hpp"
#include "distributed/nccl_communicator.hpp"
#endif

namespace mnist_ddp::distributed {
#if MNIST_DDP_HAVE_NCCL
namespace {

/// Collective: throws CommError on every rank when two ranks of one host selected the same GPU
/// (more ranks than devices on a node). NCCL refuses that ("Duplicate GPU detected"), but
/// possibly on some ranks only, leaving the others to wait for the timeout.
void check_one_device_per_rank(const World& world, const CudaDevice& device) {
  // "host|bus id", in fixed-size slots for one MPI_Allgather.
  using Slot = std::array<char, 256>;
  Slot mine{};
  const std::string key = world.host() + "|" + device.pci_bus_id;
  std::strncpy(mine.data(), key.c_str(), mine.size() - 1);
  std::vector<Slot> all(world.size());
  MDDP_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                               static_cast<int>(mine.size()), MPI_CHAR, world.comm()));
  for (int a = 0; a < world.size(); ++a) {
    for (int b = a + 1; b < world.size(); ++b) {
      if (std::strcmp(all[a].data(), all[b].data()) != 0) continue;
      throw CommError("ranks " + std::to_string(a) + " and " + std::to_string(b) +
                      " would share the CUDA device " + std::string(all[a].data()) +
                      ": NCCL needs a device of its own for each rank (start no more ranks per "
                      "node than it has GPUs)");
    }
  }
}

}  // namespace
#endif

bool nccl_built_in() {
#if MNIST_DDP_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_nccl_communicator(const World& world, double timeout_seconds) {
#if MNIST_DDP_HAVE_NCCL
  CudaDevice device;
  std::string local_error;
  try {
    device = select_device_for_local_rank(world.local_rank());
  } catch (const std::exception& e) {
    local_error = e.what();
  }
  // Agreed first: NcclCommunicator's start-up is collective, and a rank without a device would
  // never reach it.
  throw_unless_all_succeeded(world.comm(), local_error, "CUDA device selection");
  check_one_device_per_rank(world, device);
  return std::make_unique<NcclCommunicator>(world.comm(), device.index, timeout_seconds);
#else
  (void)world;
  (void)timeout_seconds;
  throw CommError(
      "this build has no NCCL backend (configured with MNIST_DDP_NCCL=OFF or without the CUDA "
      "toolkit)");
#endif
}

std::unique_ptr<Communicator> make_communicator(const World& world, const DevicePlan& plan,
                                                double timeout_seconds) {
  if (plan.backend == "nccl") {
    return std::make_unique<StagingCommunicator>(make_nccl_communicator(world, timeout_seconds),
                                                 plan.device);
  }
  auto mpi = std::make_unique<MpiCommunicator>(world.comm(), timeout_seconds);
  if (!plan.on_cuda()) return mpi;
  return std::make_unique<StagingCommunicator>(std::move(mpi), c10::Device(c10::kCPU));
}

}  // namespace mnist_ddp::distributed
