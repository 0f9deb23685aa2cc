// tests/unit/test_device_optimizer.cpp — DeviceOptimizer takes the steps of LibTorch's SGD and
// Adam, with the rate changing every step, in the optimizer's own state objects.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "checkpoint/optimizer_state.hpp"
#include "train/device_optimizer.hpp"

namespace mnist_ddp::train {
namespace {

constexpr int kSteps = 25;

std::vector<at::Tensor> fresh_parameters() {
  at::manual_seed(3);
  // A channels-last weight among them: state and updates keep each parameter's layout.
  return {at::randn({4, 3, 2, 2}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_(),
          at::randn({7}).requires_grad_()};
}

/// Gives every parameter the gradient of step `step`: reproducible, of mixed sign and size.
void set_gradients(const std::vector<at::Tensor>& parameters, int step) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    at::Generator generator = at::detail::createCPUGenerator(100 * step + i);
    at::Tensor grad = at::randn(parameters[i].sizes(), generator, at::TensorOptions());
    parameters[i].mutable_grad() =
        (grad * (1 + step % 3)).contiguous(parameters[i].suggest_memory_format());
  }
}

double rate(int step) { return 0.01 * (1 + step) / (1.0 + 0.1 * step * step); }

/// kSteps steps of `config`'s optimizer by LibTorch and by DeviceOptimizer, from the same start.
void check_same_steps(const config::TrainConfig& config) {
  const std::vector<at::Tensor> reference = fresh_parameters();
  const std::vector<at::Tensor> ours = fresh_parameters();
  const auto reference_optimizer = make_optimizer(config, reference);
  const auto our_optimizer = make_optimizer(config, ours);
  DeviceOptimizer device(*our_optimizer);
  for (int step = 0; step < kSteps; ++step) {
    set_gradients(reference, step);
    set_gradients(ours, step);
    for (auto& group : reference_optimizer->param_groups()) group.options().set_lr(rate(step));
    reference_optimizer->step();
    device.prepare(rate(step));
    device.apply();
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    CAPTURE(i);
    const double scale = reference[i].abs().max().item<double>();
    const double difference = (ours[i] - reference[i]).abs().max().item<double>();
    CAPTURE(difference);
    CHECK(difference <= 1e-6 * scale);
    CHECK(ours[i].is_contiguous(reference[i].suggest_memory_format()));
  }
  CHECK(our_optimizer->param_groups()[0].options().get_lr() == rate(kSteps - 1));
  // The state a checkpoint writes: the same names and, to float32's last bits, the same values.
  const checkpoint::NamedTensors expected =
      checkpoint::optimizer_state_tensors(*reference_optimizer, reference);
  const checkpoint::NamedTensors got = checkpoint::optimizer_state_tensors(*our_optimizer, ours);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(got[i].first);
    CHECK(got[i].first == expected[i].first);
    const at::Tensor a = got[i].second.to(at::kDouble);
    const at::Tensor b = expected[i].second.to(at::kDouble);
    CHECK((a - b).abs().max().item<double>() <= 1e-6 * std::max(1.0, b.abs().max().item<double>()));
  }
}

TEST_CASE("DeviceOptimizer: SGD, plain and with momentum and weight decay, as LibTorch's") {
  config::TrainConfig config;
  check_same_steps(config);
  config.momentum = 0.9;
  config.weight_decay = 0.01;
  check_same_steps(config);
}

TEST_CASE("DeviceOptimizer: Adam, plain and with weight decay and other betas, as LibTorch's") {
  config::TrainConfig config;
  config.optimizer = config::Optimizer::kAdam;
  check_same_steps(config);
  config.weight_decay = 0.01;
  config.adam_beta1 = 0.8;
  config.adam_beta2 = 0.99;
  check_same_steps(config);
}

TEST_CASE("DeviceOptimizer: apply() takes the rate and step count prepare() left in tensors") {
  // What a replayed capture of apply() relies on: host values changed after prepare() (the
  // group's rate, Adam's step count) do not reach the update.
  for (const config::Optimizer optimizer : {config::Optimizer::kSgd, config::Optimizer::kAdam}) {
    CAPTURE(config::to_string(optimizer));
    config::TrainConfig config;
    config.optimizer = optimizer;
    const std::vector<at::Tensor> plain = fresh_parameters();
    const std::vector<at::Tensor> meddled = fresh_parameters();
    const auto plain_optimizer = make_optimizer(config, plain);
    const auto meddled_optimizer = make_optimizer(config, meddled);
    DeviceOptimizer a(*plain_optimizer);
    DeviceOptimizer b(*meddled_optimizer);
    for (int step = 0; step < 3; ++step) {
      set_gradients(plain, step);
      set_gradients(meddled, step);
      a.prepare(rate(step));
      a.apply();
      b.prepare(rate(step));
      meddled_optimizer->param_groups()[0].options().set_lr(100);
      for (auto& [key, state] : meddled_optimizer->state()) {
        if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(state.get())) adam->step(1);
      }
      b.apply();
      meddled_optimizer->param_groups()[0].options().set_lr(rate(step));
      for (auto& [key, state] : meddled_optimizer->state()) {
        if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(state.get())) {
          adam->step(step + 1);
        }
      }
    }
    for (size_t i = 0; i < plain.size(); ++i) CHECK(at::equal(plain[i], meddled[i]));
  }
}

TEST_CASE("DeviceOptimizer: steps from a checkpoint's state as from its own, bit for bit") {
  // A checkpoint holds the state contiguous; loaded, it takes its parameter's layout again
  // (channels-last for the first), which fused optimizer kernels rely on.
  for (const config::Optimizer optimizer : {config::Optimizer::kSgd, config::Optimizer::kAdam}) {
    CAPTURE(config::to_string(optimizer));
    config::TrainConfig config;
    config.optimizer = optimizer;
    config.momentum = 0.9;
    const std::vector<at::Tensor> uninterrupted = fresh_parameters();
    const auto uninterrupted_optimizer = make_optimizer(config, uninterrupted);
    DeviceOptimizer first(*uninterrupted_optimizer);
    const auto take_step = [](DeviceOptimizer& optimizer, const std::vector<at::Tensor>& params,
                              int step) {
      set_gradients(params, step);
      optimizer.prepare(rate(step));
      optimizer.apply();
    };
    for (int step = 0; step < 3; ++step) take_step(first, uninterrupted, step);

    std::map<std::string, at::Tensor> saved;
    for (const auto& [entry, tensor] :
         checkpoint::optimizer_state_tensors(*uninterrupted_optimizer, uninterrupted)) {
      saved[entry] = tensor.contiguous();
    }
    std::vector<at::Tensor> resumed;
    for (const at::Tensor& p : uninterrupted)
      resumed.push_back(p.detach().clone().requires_grad_());
    const auto resumed_optimizer = make_optimizer(config, resumed);
    checkpoint::load_optimizer_state(*resumed_optimizer, resumed, saved);
    // No structured binding: C++17 forbids capturing one in a lambda (CAPTURE makes one).
    for (const auto& named : checkpoint::optimizer_state_tensors(*resumed_optimizer, resumed)) {
      CAPTURE(named.first);
      if (named.second.dim() == 4) {
        CHECK(named.second.is_contiguous(at::MemoryFormat::ChannelsLast));
      }
    }
    DeviceOptimizer second(*resumed_optimizer);
    for (int step = 3; step < 6; ++step) {
      take_step(first, uninterrupted, step);
      take_step(second, resumed, step);
    }
    for (size_t i = 0; i < resumed.size(); ++i) CHECK(at::equal(resumed[i], uninterrupted[i]));
  }
}

TEST_CASE("DeviceOptimizer refuses optimizers whose step it does not take") {
  const std::vector<at::Tensor> parameters = fresh_parameters();
  torch::optim::SGD nesterov(parameters,
                             torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
  CHECK_THROWS_WITH(DeviceOptimizer{nesterov},
                    doctest::Contains("SGD without dampening or Nesterov momentum"));
  torch::optim::Adam amsgrad(parameters, torch::optim::AdamOptions(0.1).amsgrad(true));
  CHECK_THROWS_WITH(DeviceOptimizer{amsgrad}, doctest::Contains("Adam without AMSGrad"));
}

}  // namespace
}  // namespace mnist_ddp::train
