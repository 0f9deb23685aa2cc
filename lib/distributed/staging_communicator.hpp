// lib/distributed/staging_communicator.hpp — provides: StagingCommunicator, which lets a transport
// that works on one kind of memory (NCCL: this rank's GPU; MPI: host memory) reduce tensors that
// live anywhere, by copying them there and back.
#pragma once

#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::distributed {

/// Note [Staged collectives]. A tensor already on the transport's device goes straight to the
/// inner communicator, so the gradient buckets, which live on the training device, are never
/// copied when transport and training share a device (NCCL on CUDA, MPI on CPU). Anything else
/// (the CPU bookkeeping tensors of a CUDA run under NCCL, every tensor of a CUDA run under MPI)
/// is copied to the transport's device, reduced there and copied back; copies to and from a GPU
/// wait for the work that produced or reads them, so the result is ordered as the caller expects.
class StagingCommunicator final : public Communicator {
 public:
  StagingCommunicator(std::unique_ptr<Communicator> inner, c10::Device transport);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }

  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  void barrier() override { inner_->barrier(); }
  /// The communicator tensors are staged for.
  Communicator& transport() { return *inner_; }

 private:
  bool on_transport(const at::Tensor& tensor) const { return tensor.device() == transport_; }
  at::Tensor to_transport(const at::Tensor& tensor) const;

  std::unique_ptr<Communicator> inner_;
  c10::Device transport_;
};

}  // namespace mnist_ddp::distributed
