// lib/distributed/staging_communicator.cpp — copy to the transport's device, reduce, copy back.
#include "distributed/staging_communicator.hpp"

#include <ATen/ATen.h>

namespace mnist_ddp::distributed {
namespace {

class StagedPendingCollective final : public PendingCollective {
 public:
  StagedPendingCollective(std::unique_ptr<PendingCollective> inner, at::Tensor staged,
                          at::Tensor target)
      : inner_(std::move(inner)), staged_(std::move(staged)), target_(std::move(target)) {}

  bool test() override {
    if (!inner_->test()) return false;
    copy_back();
    return true;
  }

  void wait() override {
    inner_->wait();
    copy_back();
  }

 private:
  void copy_back() {
    if (copied_) return;
    target_.copy_(staged_);
    copied_ = true;
  }

  std::unique_ptr<PendingCollective> inner_;
  at::Tensor staged_;
  at::Tensor target_;  // shares storage with the caller's tensor
  bool copied_ = false;
};

}  // namespace

at::Tensor StagingCommunicator::to_transport(const at::Tensor& tensor) const {
  return tensor.contiguous().to(transport_);
}

void StagingCommunicator::all_reduce(at::Tensor& tensor, ReduceOp op) {
  if (on_transport(tensor)) return inner_->all_reduce(tensor, op);
  at::Tensor staged = to_transport(tensor);
  inner_->all_reduce(staged, op);
  tensor.copy_(staged);
}

std::unique_ptr<PendingCollective> StagingCommunicator::all_reduce_async(at::Tensor& tensor,
                                                                         ReduceOp op) {
  if (on_transport(tensor)) return inner_->all_reduce_async(tensor, op);
  at::Tensor staged = to_transport(tensor);
  std::unique_ptr<PendingCollective> work = inner_->all_reduce_async(staged, op);
  return std::make_unique<StagedPendingCollective>(std::move(work), staged, tensor);
}

void StagingCommunicator::broadcast(at::Tensor& tensor, int root) {
  if (on_transport(tensor)) return inner_->broadcast(tensor, root);
  at::Tensor staged = to_transport(tensor);
  inner_->broadcast(staged, root);
  tensor.copy_(staged);
}

at::Tensor StagingCommunicator::all_gather(const at::Tensor& tensor) {
  if (on_transport(tensor)) return inner_->all_gather(tensor);
  return inner_->all_gather(to_transport(tensor)).to(tensor.device());
}

}  // namespace mnist_ddp::distributed
