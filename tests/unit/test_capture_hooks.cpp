// tests/unit/test_capture_hooks.cpp — the capture hooks live with NCCL alone (Note [Collectives in
// a captured step]): a StagingCommunicator hands a tensor on the transport's device to the
// transport itself, uncopied; off CUDA a graphed step runs every step eagerly, its capture hook
// once, and ends eager training or the run on a capture failure planted there.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "common/error.hpp"
#include "distributed/staging_communicator.hpp"
#include "train/graphed_step.hpp"

namespace mnist_ddp {
namespace {

/// One rank whose all_reduce adds 1 and broadcast writes 7; it keeps the last storage it took.
class Recording final : public distributed::Communicator {
 public:
  struct Done final : distributed::PendingCollective {
    bool test() override { return true; }
    void wait() override {}
  };

  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "recording"; }
  void all_reduce(at::Tensor& tensor, distributed::ReduceOp) override {
    taken = tensor.data_ptr();
    tensor.add_(1);
  }
  std::unique_ptr<distributed::PendingCollective> all_reduce_async(
      at::Tensor& tensor, distributed::ReduceOp op) override {
    all_reduce(tensor, op);
    auto done = std::make_unique<Done>();
    pending = done.get();
    return done;
  }
  void broadcast(at::Tensor& tensor, int) override {
    taken = tensor.data_ptr();
    tensor.fill_(7);
  }
  at::Tensor all_gather(const at::Tensor& tensor) override {
    taken = tensor.data_ptr();
    return tensor.unsqueeze(0);
  }
  void barrier() override {}

  const void* taken = nullptr;
  const distributed::PendingCollective* pending = nullptr;
};

const c10::Device kCpu(c10::kCPU);

}  // namespace

TEST_CASE("a staging communicator hands a tensor on the transport's device to it, uncopied") {
  auto inner = std::make_unique<Recording>();
  Recording& transport = *inner;
  distributed::StagingCommunicator staged(std::move(inner), kCpu);
  at::Tensor tensor = at::zeros({3});
  staged.all_reduce(tensor, distributed::ReduceOp::kSum);
  CHECK(transport.taken == tensor.data_ptr());
  CHECK(at::equal(tensor, at::ones({3})));
  staged.broadcast(tensor, 0);
  CHECK(transport.taken == tensor.data_ptr());
  CHECK(at::equal(tensor, at::full({3}, 7.0f)));
  const auto pending = staged.all_reduce_async(tensor, distributed::ReduceOp::kSum);
  CHECK(pending.get() == transport.pending);  // the transport's own, with nothing to copy back
  CHECK(at::equal(tensor, at::full({3}, 8.0f)));
  const at::Tensor gathered = staged.all_gather(tensor);
  CHECK(transport.taken == tensor.data_ptr());
  CHECK(gathered.sizes().vec() == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("off CUDA a graphed step runs every step eagerly and its capture hook once") {
  Recording comm;
  int runs = 0;
  int hooks = 0;
  const train::TrainingStream stream(kCpu, /*captured_steps=*/true);
  train::GraphedStep step([&] { ++runs; }, kCpu, comm, /*warmup_steps=*/2, /*required=*/true);
  const auto hook = [&] { ++hooks; };
  for (int i = 0; i < 2; ++i) CHECK(step.run(hook));
  CHECK(hooks == 0);  // the warm-up steps are not captured
  for (int i = 0; i < 3; ++i) CHECK(step.run(hook));
  CHECK(hooks == 1);  // where the step would be captured, then replays
  CHECK(runs == 5);
  CHECK(step.fallback().empty());
  CHECK_FALSE(step.replaying());
}

TEST_CASE("a capture failure planted off CUDA is rank 0's: eager from there, or the run ends") {
  Recording comm;
  int runs = 0;
  const auto planted = [] { throw std::runtime_error("planted"); };
  train::GraphedStep eager([&] { ++runs; }, kCpu, comm, /*warmup_steps=*/1, /*required=*/false);
  CHECK(eager.run(planted));  // the warm-up step
  CHECK_FALSE(eager.run(planted));
  CHECK(runs == 1);  // the failed capture trained nothing
  CHECK(eager.fallback() == "rank 0: planted");

  train::GraphedStep required([&] { ++runs; }, kCpu, comm, /*warmup_steps=*/0, /*required=*/true);
  std::string message = "(nothing thrown)";
  ExitCode code = ExitCode::kOk;
  try {
    required.run(planted);
  } catch (const Error& e) {
    message = e.what();
    code = e.code();
  }
  CHECK(message ==
        "capturing the training step as a CUDA graph failed on rank 0: planted (--cuda-graph off "
        "trains without one)");
  CHECK(code == ExitCode::kFailure);
  CHECK(runs == 1);
}

}  // namespace mnist_ddp
