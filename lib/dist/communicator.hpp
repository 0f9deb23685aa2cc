// lib/dist/communicator.hpp — provides: Communicator, the collectives training needs
// (allreduce sum/average/max, broadcast, barrier), independent of the transport (MPI, NCCL).
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::dist {

enum class ReduceOp { kSum, kAverage, kMax };

/// Collectives over all ranks of a job. Every rank must call the same collectives in the same
/// order with tensors of the same shape and dtype.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "mpi", "nccl": recorded in logs and metrics.
  virtual std::string backend() const = 0;

  /// Reduces `tensor` in place across ranks; every rank ends with the result.
  /// Supports float, double and int64; kAverage only for floating types.
  virtual void all_reduce(at::Tensor& tensor, ReduceOp op) = 0;
  /// Copies `tensor` from `root` into `tensor` on every other rank (any dtype but bool).
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
  /// Every rank's `tensor` (same shape everywhere), stacked in rank order: (size(), ...).
  virtual at::Tensor all_gather(const at::Tensor& tensor) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
};

}  // namespace mnist_ddp::dist
