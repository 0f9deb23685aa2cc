// tests/unit/test_capture_hooks.cpp — the capture hooks live with NCCL alone (Note [Collectives in
// a captured step]): a graphed step finds the transport under a StagingCommunicator, and off CUDA
// a training stream and a graphed step leave every step eager.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "distributed/staging_communicator.hpp"
#include "train/graphed_step.hpp"

namespace mnist_ddp {
namespace {

/// A one-rank transport that does nothing.
class OneRank final : public distributed::Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "one rank"; }
  void all_reduce(at::Tensor&, distributed::ReduceOp) override {}
  std::unique_ptr<distributed::PendingCollective> all_reduce_async(at::Tensor&,
                                                                   distributed::ReduceOp) override {
    return nullptr;
  }
  void broadcast(at::Tensor&, int) override {}
  at::Tensor all_gather(const at::Tensor& tensor) override { return tensor.unsqueeze(0); }
  void barrier() override {}
};

}  // namespace

TEST_CASE("a staging communicator hands out the transport it stages for") {
  auto inner = std::make_unique<OneRank>();
  const distributed::Communicator* transport = inner.get();
  distributed::StagingCommunicator staged(std::move(inner), c10::Device(c10::kCPU));
  CHECK(&staged.transport() == transport);
}

TEST_CASE("off CUDA a training stream and a graphed step run every step eagerly") {
  OneRank comm;
  int runs = 0;
  {
    const train::TrainingStream stream(c10::Device(c10::kCPU), /*captured_steps=*/true);
    train::GraphedStep step([&] { ++runs; }, c10::Device(c10::kCPU), comm, /*warmup_steps=*/1,
                            /*required=*/true);
    for (int i = 0; i < 3; ++i) step.run({});
    CHECK_FALSE(step.replaying());
    CHECK(step.nodes() == 0);
  }
  CHECK(runs == 3);
}

}  // namespace mnist_ddp
