// lib/distributed/communicator.hpp — provides: Communicator, the collectives training needs
// (allreduce sum/average/max, waited for or started as a PendingCollective; broadcast;
// all_gather; barrier), independent of the transport (MPI, NCCL, staged across devices).
#pragma once

#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

namespace mnist_ddp::distributed {

enum class ReduceOp { kSum, kAverage, kMax };

/// A collective in flight. The tensor it works on must stay alive and untouched until it is done.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  /// Lets the transport make progress without blocking; returns whether it is done.
  virtual bool test() = 0;
  /// Blocks until done (applying the division of an average); on a GPU transport, until the
  /// result is ordered before the caller's later work on its stream, which need not wait on the
  /// host. Calling it again does nothing.
  virtual void wait() = 0;
};

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
  /// Starts all_reduce without waiting for it. kSum also supports bfloat16 and float16 (each
  /// partial sum rounded to that type), for compressed gradients.
  virtual std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) = 0;
  /// Copies `tensor` from `root` into `tensor` on every other rank (any dtype but bool).
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
  /// Every rank's `tensor` (same shape everywhere), stacked in rank order: (size(), ...).
  virtual at::Tensor all_gather(const at::Tensor& tensor) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
};

}  // namespace mnist_ddp::distributed
