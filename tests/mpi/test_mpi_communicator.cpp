// tests/mpi/test_mpi_communicator.cpp — MpiCommunicator values checked on every rank.
#include <doctest/doctest.h>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "distributed/mpi_communicator.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::distributed {
namespace {

/// {rank + 1, 2 * (rank + 1), 3 * (rank + 1)} in `dtype`.
at::Tensor rank_values(int rank, at::ScalarType dtype) {
  return at::arange(1, 4, dtype) * (rank + 1);
}

/// 1 + 2 + ... + size.
double rank_sum(int size) { return size * (size + 1) / 2.0; }

TEST_CASE("all_reduce sums float, double, int32 and int64 tensors on every rank") {
  MpiCommunicator comm(testing::test_world().comm());
  for (at::ScalarType dtype : {at::kFloat, at::kDouble, at::kInt, at::kLong}) {
    const std::string type_name = c10::toString(dtype);
    CAPTURE(type_name);
    at::Tensor t = rank_values(comm.rank(), dtype);
    comm.all_reduce(t, ReduceOp::kSum);
    CHECK((t.scalar_type() == dtype));
    for (int i = 0; i < 3; ++i) CHECK(t[i].item<double>() == (i + 1) * rank_sum(comm.size()));
  }
}

TEST_CASE("all_reduce average divides the sum by the world size") {
  MpiCommunicator comm(testing::test_world().comm());
  at::Tensor t = rank_values(comm.rank(), at::kDouble);
  comm.all_reduce(t, ReduceOp::kAverage);
  for (int i = 0; i < 3; ++i) {
    CHECK(t[i].item<double>() == doctest::Approx((i + 1) * rank_sum(comm.size()) / comm.size()));
  }
}

TEST_CASE("all_reduce max takes the largest value") {
  MpiCommunicator comm(testing::test_world().comm());
  at::Tensor t = at::full({2}, comm.rank() == 1 ? 42 : comm.rank(), at::kLong);
  comm.all_reduce(t, ReduceOp::kMax);
  CHECK(t[0].item<std::int64_t>() == 42);
  CHECK(t[1].item<std::int64_t>() == 42);
}

TEST_CASE("broadcast copies the root's tensor to every rank, from any root") {
  MpiCommunicator comm(testing::test_world().comm());
  for (int root : {0, comm.size() - 1}) {
    at::Tensor t = at::full({4}, static_cast<float>(comm.rank()), at::kFloat);
    comm.broadcast(t, root);
    CHECK(at::equal(t, at::full({4}, static_cast<float>(root), at::kFloat)));
  }
}

TEST_CASE("broadcast carries raw bytes") {
  MpiCommunicator comm(testing::test_world().comm());
  at::Tensor bytes = comm.rank() == 0 ? at::arange(0, 250, at::kByte) : at::zeros({250}, at::kByte);
  comm.broadcast(bytes, /*root=*/0);
  CHECK(at::equal(bytes, at::arange(0, 250, at::kByte)));
}

TEST_CASE("all_gather stacks every rank's tensor in rank order") {
  MpiCommunicator comm(testing::test_world().comm());
  const at::Tensor mine = at::full({2, 3}, comm.rank(), at::kLong);
  const at::Tensor all = comm.all_gather(mine);
  REQUIRE(all.sizes().vec() == std::vector<std::int64_t>{comm.size(), 2, 3});
  for (int rank = 0; rank < comm.size(); ++rank) {
    CHECK(at::equal(all[rank], at::full({2, 3}, rank, at::kLong)));
  }
}

TEST_CASE("barrier returns on every rank") {
  MpiCommunicator comm(testing::test_world().comm());
  comm.barrier();
  CHECK(comm.size() == testing::test_world().size());
}

TEST_CASE("unsupported tensors are internal errors, refused before any communication") {
  MpiCommunicator comm(testing::test_world().comm());
  at::Tensor strided = at::zeros({4, 4}).t();
  CHECK_THROWS_WITH_AS(comm.all_reduce(strided, ReduceOp::kSum),
                       doctest::Contains("internal error: all_reduce over MPI needs a contiguous"),
                       InternalError);
  at::Tensor bytes = at::zeros({4}, at::kByte);
  CHECK_THROWS_AS(comm.all_reduce(bytes, ReduceOp::kSum), InternalError);
  at::Tensor integers = at::zeros({4}, at::kLong);
  CHECK_THROWS_AS(comm.all_reduce(integers, ReduceOp::kAverage), InternalError);
}

}  // namespace
}  // namespace mnist_ddp::distributed
