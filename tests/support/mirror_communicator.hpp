// tests/support/mirror_communicator.hpp — provides: MirrorCommunicator, a world of ranks that each
// hold what this one holds, in one process: collectives with known results and no MPI.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::testing {

/// Rank 0 of `size` ranks with the same tensors: a sum is `size` times this rank's value, an
/// average or a maximum is its value, a gather is `size` copies of it.
class MirrorCommunicator final : public distributed::Communicator {
 public:
  explicit MirrorCommunicator(int size = 1) : size_(size) {}

  int rank() const override { return 0; }
  int size() const override { return size_; }
  std::string backend() const override { return "mirror"; }
  void all_reduce(at::Tensor& tensor, distributed::ReduceOp op) override {
    if (op == distributed::ReduceOp::kSum) tensor.mul_(size_);
  }
  std::unique_ptr<distributed::PendingCollective> all_reduce_async(
      at::Tensor& tensor, distributed::ReduceOp op) override {
    all_reduce(tensor, op);
    return std::make_unique<Done>();
  }
  void broadcast(at::Tensor&, int) override {}
  at::Tensor all_gather(const at::Tensor& tensor) override {
    return at::stack(std::vector<at::Tensor>(static_cast<size_t>(size_), tensor));
  }
  void barrier() override {}

 private:
  struct Done final : distributed::PendingCollective {
    bool test() override { return true; }
    void wait() override {}
  };
  int size_;
};

}  // namespace mnist_ddp::testing
