// lib/dist/mpi_communicator.cpp — collectives over MPI on CPU tensors.
#include "dist/mpi_communicator.hpp"

#include <climits>
#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "dist/mpi_check.hpp"

namespace mnist_ddp::dist {
namespace {

MPI_Datatype mpi_type_of(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return MPI_FLOAT;
    case at::kDouble:
      return MPI_DOUBLE;
    case at::kLong:
      return MPI_INT64_T;
    case at::kInt:
      return MPI_INT32_T;
    case at::kByte:
      return MPI_UINT8_T;
    default:
      throw CommError(std::string("MPI collectives support float, double, int32, int64 and "
                                  "uint8 tensors, not ") +
                      c10::toString(tensor.scalar_type()));
  }
}

/// The element count as MPI's int, after checking that MPI can address the tensor directly.
int checked_count(const at::Tensor& tensor, const char* collective) {
  if (!tensor.device().is_cpu() || !tensor.is_contiguous()) {
    throw CommError(std::string(collective) + " over MPI needs a contiguous CPU tensor");
  }
  if (tensor.numel() > INT_MAX) {
    throw CommError(std::string(collective) + ": tensor of " + std::to_string(tensor.numel()) +
                    " elements exceeds MPI's int count");
  }
  return static_cast<int>(tensor.numel());
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  MDDP_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MDDP_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

void MpiCommunicator::all_reduce(at::Tensor& tensor, ReduceOp op) {
  const int count = checked_count(tensor, "all_reduce");
  if (tensor.scalar_type() == at::kByte) {
    throw CommError("all_reduce of uint8 tensors would overflow; reduce a wider type");
  }
  const MPI_Datatype type = mpi_type_of(tensor);
  if (op == ReduceOp::kAverage && !tensor.is_floating_point()) {
    throw CommError("all_reduce average needs a floating-point tensor, not " +
                    std::string(c10::toString(tensor.scalar_type())));
  }
  const MPI_Op mpi_op = op == ReduceOp::kMax ? MPI_MAX : MPI_SUM;
  MDDP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, tensor.data_ptr(), count, type, mpi_op, comm_));
  // Note [Gradient averaging]: the sum is complete only once MPI_Allreduce has returned, so the
  // division by the world size comes after it, never before.
  if (op == ReduceOp::kAverage) tensor.div_(size_);
}

void MpiCommunicator::broadcast(at::Tensor& tensor, int root) {
  const int count = checked_count(tensor, "broadcast");
  MDDP_MPI_CHECK(MPI_Bcast(tensor.data_ptr(), count, mpi_type_of(tensor), root, comm_));
}

at::Tensor MpiCommunicator::all_gather(const at::Tensor& tensor) {
  const int count = checked_count(tensor, "all_gather");
  std::vector<std::int64_t> shape = tensor.sizes().vec();
  shape.insert(shape.begin(), size_);
  at::Tensor gathered = at::empty(shape, tensor.options());
  const MPI_Datatype type = mpi_type_of(tensor);
  MDDP_MPI_CHECK(
      MPI_Allgather(tensor.data_ptr(), count, type, gathered.data_ptr(), count, type, comm_));
  return gathered;
}

void MpiCommunicator::barrier() { MDDP_MPI_CHECK(MPI_Barrier(comm_)); }

}  // namespace mnist_ddp::dist
