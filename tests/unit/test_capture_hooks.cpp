// tests/unit/test_capture_hooks.cpp — the communicator's CUDA-stream and capture hooks (Note
// [Collectives in a captured step]): whatever wraps the transport hands them on, and off CUDA
// nothing calls them.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "distributed/staging_communicator.hpp"
#include "train/graphed_step.hpp"

namespace mnist_ddp {
namespace {

/// A one-rank transport that records the hooks it is given and does nothing else.
class HookRecorder final : public distributed::Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "recorder"; }
  void all_reduce(at::Tensor&, distributed::ReduceOp) override {}
  std::unique_ptr<distributed::PendingCollective> all_reduce_async(at::Tensor&,
                                                                   distributed::ReduceOp) override {
    return nullptr;
  }
  void broadcast(at::Tensor&, int) override {}
  at::Tensor all_gather(const at::Tensor& tensor) override { return tensor.unsqueeze(0); }
  void barrier() override {}

  void set_caller_stream(CUstream_st* stream) override {
    calls.push_back("set_caller_stream " +
                    std::to_string(reinterpret_cast<std::uintptr_t>(stream)));
  }
  void begin_capture() override { calls.push_back("begin_capture"); }
  void end_capture() override { calls.push_back("end_capture"); }
  void watch_caller_stream(const std::string& what) override { calls.push_back("watch " + what); }

  std::vector<std::string> calls;
};

}  // namespace

TEST_CASE("a staging communicator hands the stream and capture hooks to its transport") {
  // The program wraps NCCL in a StagingCommunicator: a hook stopped there would leave NCCL
  // ordering its collectives after the wrong stream and outside the capture.
  auto recorder = std::make_unique<HookRecorder>();
  const HookRecorder& transport = *recorder;
  distributed::StagingCommunicator staged(std::move(recorder), c10::Device(c10::kCPU));
  staged.set_caller_stream(reinterpret_cast<CUstream_st*>(std::uintptr_t{4660}));
  staged.begin_capture();
  staged.end_capture();
  staged.watch_caller_stream("replay of the captured training step");
  const std::vector<std::string> expected{"set_caller_stream 4660", "begin_capture", "end_capture",
                                          "watch replay of the captured training step"};
  CHECK(transport.calls == expected);
}

TEST_CASE("off CUDA a training stream and a graphed step leave the communicator's hooks alone") {
  HookRecorder comm;
  int runs = 0;
  {
    const train::TrainingStream stream(c10::Device(c10::kCPU), comm, /*captured_steps=*/true);
    train::GraphedStep step([&] { ++runs; }, c10::Device(c10::kCPU), comm, /*warmup_steps=*/1);
    for (int i = 0; i < 3; ++i) step.run();
    CHECK_FALSE(step.replaying());
  }
  CHECK(runs == 3);
  CHECK(comm.calls.empty());
}

}  // namespace mnist_ddp
