// lib/distributed/mpi_communicator.hpp — provides: MpiCommunicator, for contiguous CPU tensors.
#pragma once

#include <mpi.h>

#include <limits>

#include "distributed/communicator.hpp"
#include "distributed/mpi_watchdog.hpp"

namespace mnist_ddp::distributed {

class MpiCommunicator final : public Communicator {
 public:
  /// Collective. A wait past `timeout_seconds` throws CommError (Note [Stall diagnosis]).
  explicit MpiCommunicator(MPI_Comm comm,
                           double timeout_seconds = std::numeric_limits<double>::infinity())
      : watchdog_(comm, timeout_seconds) {}

  int rank() const override { return watchdog_.rank(); }
  int size() const override { return watchdog_.size(); }
  std::string backend() const override { return "mpi"; }

  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  void barrier() override;

 private:
  MpiWatchdog watchdog_;
};

}  // namespace mnist_ddp::distributed
