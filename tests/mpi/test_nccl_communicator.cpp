// tests/mpi/test_nccl_communicator.cpp — make_nccl_communicator on every rank: the clear CommError
// where there is no NCCL backend or no CUDA device (this machine, CI), and (test suite gpu) the
// collectives where every rank has a GPU of its own.
#include <doctest/doctest.h>

#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "distributed/agreement.hpp"
#include "distributed/session.hpp"
#include "support/captured_stderr.hpp"
#include "support/late_rank.hpp"
#include "support/mpi_test_world.hpp"
#include "support/nccl_comm.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#endif

namespace mnist_ddp::distributed {
namespace {

/// Whether this process sees a CUDA device (the same answer on every rank of one machine).
bool cuda_device_present() {
#if MNIST_DDP_HAVE_NCCL
  try {
    return cuda_device_count() > 0;
  } catch (const CommError&) {
    return false;
  }
#else
  return false;
#endif
}

TEST_CASE("make_nccl_communicator fails with exit code 5 on every rank without a GPU, saying why") {
  if (cuda_device_present()) {
    MESSAGE("a CUDA device is present: the no-device error cannot be checked here; skipped");
    return;
  }
  const std::string expected =
      nccl_built_in() ? "no CUDA device: cudaGetDeviceCount" : "this build has no NCCL backend";
  CAPTURE(expected);
  testing::CapturedStderr printed;
  int code = 0;
  std::string message;
  try {
    testing::make_nccl_communicator(testing::test_world(), testing::kCommTimeoutSeconds);
    FAIL("make_nccl_communicator succeeded without a CUDA device");
  } catch (const AgreedFailure& failure) {  // device selection, agreed: rank 0 says why
    code = failure.code;
    message = printed.text();
  } catch (const CommError& e) {  // a build without NCCL refuses before any agreement
    code = static_cast<int>(e.code());
    message = e.what();
  }
  CAPTURE(message);
  CHECK(code == static_cast<int>(ExitCode::kComm));
  if (nccl_built_in() && testing::test_world().rank() != 0) CHECK(message.empty());
  if (!nccl_built_in() || testing::test_world().rank() == 0) {
    CHECK(message.find(expected) != std::string::npos);
  }
}

TEST_CASE("a rank that stalls before device selection ends the others' agreement at the timeout") {
  if (!nccl_built_in() || cuda_device_present()) {
    MESSAGE("device selection fails here only with the NCCL backend and no CUDA device; skipped");
    return;
  }
  const World& world = testing::test_world();
  const int held = world.size() - 1;
  std::string message;
  int code = 0;
  {
    const testing::WorldCommTimeout short_timeout(/*seconds=*/0.2);
    // The held rank selects its device only once every other rank gave up on it.
    if (world.rank() == held) {
      CHECK(testing::hold_until_released(held, testing::kCommTimeoutSeconds));
    }
    try {
      testing::make_nccl_communicator(world, testing::kCommTimeoutSeconds);
    } catch (const AgreedFailure& failure) {
      code = failure.code;
    } catch (const CommError& e) {
      message = e.what();
      code = static_cast<int>(e.code());
    }
    if (world.rank() != held) testing::release(held);
  }
  CAPTURE(message);
  CHECK(code == static_cast<int>(ExitCode::kComm));
  if (world.rank() != held) {
    CHECK(message.find("the agreement after CUDA device selection (collective #") !=
          std::string::npos);
    CHECK(message.find("waits for rank(s) " + std::to_string(held) + "@" + world.host() +
                       " not responding") != std::string::npos);
  }
  // The held rank agrees with the others' contributions, rank 0's failure (Note [One agreement]),
  // which rank 0 reported as its timeout.
}

TEST_CASE("NCCL collectives where every rank has a GPU of its own" * doctest::test_suite("gpu")) {
  std::unique_ptr<Communicator> comm;
  try {
    comm = testing::make_nccl_communicator(testing::test_world(), testing::kCommTimeoutSeconds);
  } catch (const CommError& e) {
    // More ranks than GPUs: refused on every rank, with the reason.
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find("NCCL needs a GPU of its own for each rank") != std::string::npos);
    MESSAGE("fewer GPUs than ranks on this node; collectives skipped");
    return;
  }
  CHECK(comm->backend() == "nccl");
  CHECK(comm->size() == testing::test_world().size());
  CHECK(comm->rank() == testing::test_world().rank());
  comm->barrier();

  at::Tensor on_cpu = at::ones({3});
  CHECK_THROWS_WITH_AS(comm->all_reduce(on_cpu, ReduceOp::kSum),
                       doctest::Contains("needs a contiguous tensor on cuda:"), InternalError);

  const int rank = comm->rank();
  const int size = comm->size();
  const double rank_sum = size * (size + 1) / 2.0;  // 1 + 2 + ... + size
  // The device make_nccl_communicator selected: local rank modulo the visible devices.
  const int device = testing::test_world().local_rank() % static_cast<int>(at::getNumGPUs());
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA, device);
  for (at::ScalarType dtype : {at::kFloat, at::kDouble, at::kLong, at::kBFloat16, at::kHalf}) {
    const std::string type_name = c10::toString(dtype);
    CAPTURE(type_name);
    at::Tensor t = at::full({5}, rank + 1, cuda.dtype(dtype));
    comm->all_reduce(t, ReduceOp::kSum);
    CHECK(t.cpu().to(at::kDouble).eq(rank_sum).all().item<bool>());
  }
  at::Tensor average = at::full({4}, rank + 1.0, cuda.dtype(at::kFloat));
  comm->all_reduce(average, ReduceOp::kAverage);
  CHECK(average[0].item<double>() == doctest::Approx(rank_sum / size));
  at::Tensor maximum = at::full({2}, rank, cuda.dtype(at::kLong));
  comm->all_reduce(maximum, ReduceOp::kMax);
  CHECK(maximum[1].item<std::int64_t>() == size - 1);

  at::Tensor pending_tensor = at::full({1000}, 1.0, cuda.dtype(at::kFloat));
  auto pending = comm->all_reduce_async(pending_tensor, ReduceOp::kSum);
  pending->wait();
  pending->wait();  // again: nothing
  CHECK(pending->test());
  CHECK(pending_tensor.sum().item<double>() == doctest::Approx(1000.0 * size));

  at::Tensor from_last = at::full({3}, rank, cuda.dtype(at::kInt));
  comm->broadcast(from_last, size - 1);
  CHECK(from_last.cpu().eq(size - 1).all().item<bool>());

  const at::Tensor gathered = comm->all_gather(at::full({2}, rank, cuda.dtype(at::kFloat)));
  REQUIRE((gathered.sizes() == at::IntArrayRef({size, 2})));
  for (int r = 0; r < size; ++r) CHECK(gathered[r][1].item<double>() == r);

  at::Tensor strided = at::zeros({4, 4}, cuda).t();
  CHECK_THROWS_WITH_AS(comm->all_reduce(strided, ReduceOp::kSum), doctest::Contains("contiguous"),
                       InternalError);
  comm->barrier();
}

}  // namespace
}  // namespace mnist_ddp::distributed
