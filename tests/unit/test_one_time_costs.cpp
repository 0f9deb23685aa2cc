// tests/unit/test_one_time_costs.cpp — pay_one_time_costs: the scratch network's forward and
// backward pass run, and the training that follows draws the same random numbers.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <doctest/doctest.h>
#include <torch/utils.h>

#include <string>
#include <vector>

#include "model/autocast_scope.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::testing {
namespace {

using train::pay_one_time_costs;

std::vector<std::string>& observed_ops() {
  static std::vector<std::string> names;
  return names;
}

/// The names of the operators and autograd functions `run` calls on this thread.
template <typename Run>
std::vector<std::string> ops_called_by(Run run) {
  observed_ops().clear();
  const at::CallbackHandle handle = at::addThreadLocalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        observed_ops().emplace_back(fn.name());
        return nullptr;
      }));
  run();
  at::removeCallback(handle);
  return observed_ops();
}

bool any_contains(const std::vector<std::string>& names, const std::string& part) {
  for (const std::string& name : names) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("pay_one_time_costs") {
  TEST_CASE("it runs the network's forward and backward pass and times them") {
    double seconds = 0;
    const std::vector<std::string> ops = ops_called_by([&] {
      seconds = pay_one_time_costs(config::Model::kCnn, c10::Device(c10::kCPU), 8, false);
    });
    CHECK(any_contains(ops, "convolution"));
    CHECK(any_contains(ops, "ConvolutionBackward"));
    CHECK(any_contains(ops, "SoftmaxCrossEntropy"));  // the loss's backward node
    CHECK(seconds > 0);
  }

  TEST_CASE("under bf16 the forward pass runs in autocast, which ends with it") {
    const std::vector<std::string> ops = ops_called_by(
        [] { pay_one_time_costs(config::Model::kLinear, c10::Device(c10::kCPU), 4, true); });
    CHECK(any_contains(ops, "ToCopyBackward"));  // the bfloat16 logits cast back to float
    CHECK_FALSE(model::autocast_enabled(c10::kCPU));
  }

  TEST_CASE("the global generator draws afterwards what it would have drawn without it") {
    // cnn draws from it twice: its initial values and its dropout masks.
    torch::manual_seed(7);
    const at::Tensor expected = at::rand({16});
    torch::manual_seed(7);
    pay_one_time_costs(config::Model::kCnn, c10::Device(c10::kCPU), 8, false);
    CHECK(at::equal(at::rand({16}), expected));
  }
}

}  // namespace mnist_ddp::testing
