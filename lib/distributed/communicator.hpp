// lib/distributed/communicator.hpp — provides: Communicator, PendingCollective (any transport).
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
  /// Blocks until done (dividing an average); on a GPU, until the result is ordered before the
  /// caller's later stream work, without a host wait. Idempotent.
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

  /// In place, result on every rank. float, double, int64; kAverage only for floating types.
  virtual void all_reduce(at::Tensor& tensor, ReduceOp op) = 0;
  /// kSum also takes bfloat16 and float16 (partial sums rounded to it), for compressed gradients.
  virtual std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) = 0;
  /// Any dtype but bool.
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
  /// Every rank's `tensor` (same shape everywhere), stacked in rank order: (size(), ...).
  virtual at::Tensor all_gather(const at::Tensor& tensor) = 0;
  virtual void barrier() = 0;
};

}  // namespace mnist_ddp::distributed
