// lib/distributed/staging_communicator.hpp — provides: StagingCommunicator.
#pragma once

#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::distributed {

/// Note [Staged collectives]. A tensor on the transport's device goes straight through, so
/// gradient buckets are never copied when transport and training share a device. Others are
/// copied there and back; copies to and from a GPU are stream-ordered, so results arrive in order.
class StagingCommunicator final : public Communicator {
 public:
  StagingCommunicator(std::unique_ptr<Communicator> inner, c10::Device transport)
      : inner_(std::move(inner)), transport_(transport) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }

  void all_reduce(at::Tensor& tensor, ReduceOp op) override;
  std::unique_ptr<PendingCollective> all_reduce_async(at::Tensor& tensor, ReduceOp op) override;
  void broadcast(at::Tensor& tensor, int root) override;
  at::Tensor all_gather(const at::Tensor& tensor) override;
  void barrier() override { inner_->barrier(); }

 private:
  bool on_transport(const at::Tensor& tensor) const { return tensor.device() == transport_; }
  at::Tensor to_transport(const at::Tensor& tensor) const;

  std::unique_ptr<Communicator> inner_;
  c10::Device transport_;
};

}  // namespace mnist_ddp::distributed
