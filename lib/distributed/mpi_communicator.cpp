// lib/distributed/mpi_communicator.cpp — collectives over MPI on CPU tensors.
#include "distributed/mpi_communicator.hpp"

#include <climits>
#include <exception>
#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"

namespace mnist_ddp::distributed {
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
      throw InternalError(std::string("no MPI type for ") + c10::toString(tensor.scalar_type()));
  }
}

/// A user-defined MPI sum, as MPI has no bfloat16 or half; partial sums round to 16 bits.
template <typename Half>
void sum_16_bit(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const Half*>(in);
  auto* b = static_cast<Half*>(inout);
  for (int i = 0; i < *count; ++i)
    b[i] = static_cast<Half>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

struct Reduction {
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

/// Its type and op, created once per process.
template <typename Half>
Reduction make_sixteen_bit_sum() {
  Reduction sum;
  MDDP_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &sum.type));
  MDDP_MPI_CHECK(MPI_Type_commit(&sum.type));
  MDDP_MPI_CHECK(MPI_Op_create(&sum_16_bit<Half>, /*commute=*/1, &sum.op));
  return sum;
}

Reduction sixteen_bit_sum(at::ScalarType dtype) {
  static const Reduction bfloat16 = make_sixteen_bit_sum<c10::BFloat16>();
  static const Reduction half = make_sixteen_bit_sum<c10::Half>();
  return dtype == at::kBFloat16 ? bfloat16 : half;
}

class MpiPendingCollective final : public PendingCollective {
 public:
  MpiPendingCollective(MpiWatchdog& watchdog, MPI_Request request, at::Tensor tensor, int divide_by)
      : watchdog_(watchdog),
        number_(watchdog.started()),
        request_(request),
        tensor_(std::move(tensor)),
        divide_by_(divide_by) {}
  ~MpiPendingCollective() override {
    if (request_ == MPI_REQUEST_NULL) return;
    if (std::uncaught_exceptions() > 0) {
      // On the way to MPI_Abort: waiting could block forever, and MPI may still write the tensor.
      keep_until_exit(std::make_shared<at::Tensor>(std::move(tensor_)));
      return;
    }
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

  bool test() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    const bool done = watchdog_.test(request_);
    if (done) finish();
    return done;
  }

  void wait() override {
    if (request_ == MPI_REQUEST_NULL) return;
    watchdog_.wait(request_, number_,
                   "all_reduce of " + std::to_string(tensor_.numel()) + " " +
                       c10::toString(tensor_.scalar_type()) + " (gradient bucket)");
    finish();
  }

 private:
  void finish() {
    request_ = MPI_REQUEST_NULL;
    // Note [Gradient averaging]: divide only once the sum is complete.
    if (divide_by_ > 1) tensor_.div_(divide_by_);
  }

  MpiWatchdog& watchdog_;
  std::int64_t number_;
  MPI_Request request_;
  at::Tensor tensor_;
  int divide_by_;
};

int checked_count(const at::Tensor& tensor, const char* collective) {
  MDDP_INTERNAL_ASSERT(tensor.device().is_cpu() && tensor.is_contiguous(),
                       std::string(collective) + " over MPI needs a contiguous CPU tensor");
  MDDP_INTERNAL_ASSERT(tensor.numel() <= INT_MAX, std::string(collective) + ": over INT_MAX");
  return static_cast<int>(tensor.numel());
}

Reduction reduction_for(const at::Tensor& tensor, ReduceOp op, const char* collective) {
  const int count = checked_count(tensor, collective);
  const at::ScalarType dtype = tensor.scalar_type();
  MDDP_INTERNAL_ASSERT(dtype != at::kByte, "all_reduce of uint8 tensors would overflow");
  MDDP_INTERNAL_ASSERT(op != ReduceOp::kAverage || tensor.is_floating_point(),
                       "all_reduce average of integers");
  if (dtype == at::kBFloat16 || dtype == at::kHalf) {
    MDDP_INTERNAL_ASSERT(op == ReduceOp::kSum, "16-bit all_reduce supports the sum only");
    Reduction sum = sixteen_bit_sum(dtype);
    sum.count = count;
    return sum;
  }
  return {count, mpi_type_of(tensor), op == ReduceOp::kMax ? MPI_MAX : MPI_SUM};
}

}  // namespace

void MpiCommunicator::all_reduce(at::Tensor& tensor, ReduceOp op) {
  const Reduction r = reduction_for(tensor, op, "all_reduce");
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), r.count, r.type, r.op,
                                watchdog_.comm(), &request));
  watchdog_.wait(request, "all_reduce of " + std::to_string(r.count) + " " +
                              c10::toString(tensor.scalar_type()));
  // Note [Gradient averaging]: divide only once the sum is complete.
  if (op == ReduceOp::kAverage) tensor.div_(size());
}

std::unique_ptr<PendingCollective> MpiCommunicator::all_reduce_async(at::Tensor& tensor,
                                                                     ReduceOp op) {
  const Reduction r = reduction_for(tensor, op, "all_reduce_async");
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), r.count, r.type, r.op,
                                watchdog_.comm(), &request));
  return std::make_unique<MpiPendingCollective>(watchdog_, request, tensor,
                                                op == ReduceOp::kAverage ? size() : 1);
}

void MpiCommunicator::broadcast(at::Tensor& tensor, int root) {
  const int count = checked_count(tensor, "broadcast");
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(
      MPI_Ibcast(tensor.data_ptr(), count, mpi_type_of(tensor), root, watchdog_.comm(), &request));
  watchdog_.wait(request, "broadcast from rank " + std::to_string(root));
}

at::Tensor MpiCommunicator::all_gather(const at::Tensor& tensor) {
  const int count = checked_count(tensor, "all_gather");
  std::vector<std::int64_t> shape = tensor.sizes().vec();
  shape.insert(shape.begin(), size());
  at::Tensor gathered = at::empty(shape, tensor.options());
  const MPI_Datatype type = mpi_type_of(tensor);
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallgather(tensor.data_ptr(), count, type, gathered.data_ptr(), count, type,
                                watchdog_.comm(), &request));
  watchdog_.wait(request, "all_gather");
  return gathered;
}

void MpiCommunicator::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Ibarrier(watchdog_.comm(), &request));
  watchdog_.wait(request, "barrier");
}

}  // namespace mnist_ddp::distributed
