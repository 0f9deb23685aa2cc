// lib/distributed/mpi_communicator.hpp — provides: MpiCommunicator, the Communicator over MPI for
// contiguous CPU tensors.
#pragma once

#include <mpi.h>

#include <limits>

#include "distributed/communicator.hpp"
#include "distributed/mpi_watchdog.hpp"

namespace mnist_ddp::distributed {

/// Communicator over an MPI communicator (MPI_COMM_WORLD in the program).
class MpiCommunicator final : public Communicator {
 public:
  /// Collective over `comm`. A collective that waits longer than `timeout_seconds` throws
  /// CommError naming it and the ranks that had not joined (Note [Stall diagnosis]).
  explicit MpiCommunicator(MPI_Comm comm,
                           double timeout_seconds = std::numeric_limits<double>::infinity());

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  void barrier() override;

 private:
  MPI_Comm comm_;
  MpiWatchdog watchdog_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace mnist_ddp::distributed
