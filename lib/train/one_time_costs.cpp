// lib/train/one_time_costs.cpp — a scratch forward and backward before the training clock.
#include "train/one_time_costs.hpp"

#include <chrono>
#include <optional>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include "common/process_clock.hpp"
#include "model/autocast_scope.hpp"
#include "model/classification_loss.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::train {
namespace {

/// Restores `device`'s default generator state at scope exit.
class GeneratorStateGuard {
 public:
  explicit GeneratorStateGuard(c10::Device device)
      : generator_(default_generator(device)), state_(generator_.get_state()) {}
  ~GeneratorStateGuard() { generator_.set_state(state_); }
  GeneratorStateGuard(const GeneratorStateGuard&) = delete;
  GeneratorStateGuard& operator=(const GeneratorStateGuard&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace

// Note [One-time costs before the clock]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A process's first forward and backward pays set-up (cuDNN/cuBLAS handles, algorithm choice,
// lazy kernel loading; the CPU thread pool, oneDNN primitives) that would otherwise count as
// training time. So it is paid before the clock, on a network of its own with the batch shape:
// the trained model, its hooks (no collective runs) and its random draws are untouched. The cost
// stays visible in startup_s and one_time_costs_s.

double pay_one_time_costs(config::Model architecture, c10::Device device, std::int64_t batch_size,
                          bool bf16) {
  const auto start = std::chrono::steady_clock::now();
  const GeneratorStateGuard cpu_generator{c10::Device(c10::kCPU)};  // the network's initial values
  std::optional<GeneratorStateGuard> device_generator;              // its dropout masks
  if (device.is_cuda()) device_generator.emplace(device);
  {
    const std::shared_ptr<model::Classifier> network = model::make_model(architecture);
    network->to(device);
    network->train();
    const at::TensorOptions on_device = at::TensorOptions().device(device);
    const at::Tensor images = at::zeros({batch_size, 1, 28, 28}, on_device.dtype(at::kFloat));
    const at::Tensor labels = at::zeros({batch_size}, on_device.dtype(at::kLong));
    at::Tensor loss;
    {
      const model::AutocastScope autocast(device.type(), bf16);
      loss = model::classification_loss(network->forward(images), labels);
    }
    torch::autograd::backward({loss});
  }
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return seconds_since(start);
}

}  // namespace mnist_ddp::train
