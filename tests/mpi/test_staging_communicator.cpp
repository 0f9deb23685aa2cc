// tests/mpi/test_staging_communicator.cpp — collectives on tensors that live elsewhere than the
// transport works (Note [Staged collectives]): CPU tensors straight through MPI everywhere; where
// there is a GPU, CUDA tensors staged through host memory for MPI and CPU tensors staged through
// the GPU for NCCL. ("nccl" in the name: tests/gpu/run.sh runs the *nccl* cases on GPUs.)
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "distributed/mpi_communicator.hpp"
#include "distributed/session.hpp"
#include "distributed/staging_communicator.hpp"
#include "support/mpi_test_world.hpp"
#include "support/nccl_comm.hpp"

namespace mnist_ddp::distributed {
namespace {

/// Every collective on tensors made with `options`, checked against the rank arithmetic; the
/// results stay where the tensors were.
void check_collectives(Communicator& comm, const at::TensorOptions& options) {
  const int rank = comm.rank();
  const int size = comm.size();
  const double rank_sum = size * (size + 1) / 2.0;  // 1 + 2 + ... + size

  at::Tensor summed = at::full({5}, rank + 1.0, options);
  comm.all_reduce(summed, ReduceOp::kSum);
  CHECK(summed.device() == options.device());
  CHECK(summed.cpu().eq(rank_sum).all().item<bool>());

  at::Tensor averaged = at::full({1000}, rank + 1.0, options);
  auto pending = comm.all_reduce_async(averaged, ReduceOp::kAverage);
  pending->wait();
  CHECK(averaged.cpu().eq(rank_sum / size).all().item<bool>());

  at::Tensor from_last = at::full({3}, static_cast<double>(rank), options);
  comm.broadcast(from_last, size - 1);
  CHECK(from_last.cpu().eq(size - 1).all().item<bool>());

  const at::Tensor gathered = comm.all_gather(at::full({2}, static_cast<double>(rank), options));
  CHECK(gathered.device() == options.device());
  REQUIRE((gathered.sizes() == at::IntArrayRef({size, 2})));
  for (int r = 0; r < size; ++r) CHECK(gathered[r][1].item<double>() == r);
}

}  // namespace

TEST_CASE("staged collectives over mpi take CPU tensors") {
  StagingCommunicator over_mpi(
      std::make_unique<MpiCommunicator>(testing::test_world().comm(), testing::kCommTimeoutSeconds),
      c10::Device(c10::kCPU));
  check_collectives(over_mpi, at::TensorOptions(at::kFloat));
}

TEST_CASE("staged collectives over mpi and nccl take tensors on any device" *
          doctest::test_suite("gpu")) {
  const World& world = testing::test_world();
  const at::TensorOptions cpu = at::TensorOptions(at::kFloat);
  const c10::Device gpu(c10::kCUDA,
                        static_cast<c10::DeviceIndex>(world.local_rank() % at::getNumGPUs()));
  const at::TensorOptions on_gpu = cpu.device(gpu);
  {
    StagingCommunicator over_mpi(
        std::make_unique<MpiCommunicator>(world.comm(), testing::kCommTimeoutSeconds),
        c10::Device(c10::kCPU));
    check_collectives(over_mpi, on_gpu);
  }
  if (!nccl_built_in() || world.local_size() > static_cast<int>(at::getNumGPUs())) {
    MESSAGE("NCCL staging skipped: no NCCL backend, or fewer GPUs than ranks on this node");
    return;
  }
  StagingCommunicator over_nccl(
      testing::make_nccl_communicator(world, testing::kCommTimeoutSeconds), gpu);
  check_collectives(over_nccl, cpu);     // staged through the GPU
  check_collectives(over_nccl, on_gpu);  // straight to NCCL
}

}  // namespace mnist_ddp::distributed
