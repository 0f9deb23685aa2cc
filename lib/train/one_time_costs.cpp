// lib/train/one_time_costs.cpp — a scratch forward and backward before the training clock.
#include "train/one_time_costs.hpp"

#include <chrono>
#include <optional>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include "common/process_clock.hpp"
#include "model/autocast_scope.hpp"
#include "model/classifier.hpp"
#include "train/default_generators.hpp"

namespace mnist_ddp::train {

// Note [One-time costs before the clock]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The first forward and backward pass of a process pays for things that later steps do not: on a
// GPU the cuDNN and cuBLAS handles and workspaces, the choice of convolution algorithms and the
// loading of every kernel on its first launch (CUDA loads modules lazily); on the CPU the thread
// pool's start and oneDNN's primitives. On a 2-core CPU a first fastcnn step at batch 256 took 43
// ms where the next took 16 (17 ms once this is paid beforehand); on a GPU it can be longer than a
// whole epoch of MNIST. Left in the first step it would be counted as training time, and time to
// accuracy would measure the libraries' set-up as much as the training. So the trainer pays it
// before its clock starts, on a network of its own with the training's batch shape: the model being
// trained, its gradients, its gradient hooks (no collective runs) and the random numbers it will
// draw are untouched. The cost stays visible: it is part of the start-up time (startup_s) and
// reported on its own (one_time_costs_s). Speed records are taken the same way, after a warm-up
// run.

double pay_one_time_costs(const std::string& model_name, c10::Device device,
                          std::int64_t batch_size, bool bf16) {
  const auto start = std::chrono::steady_clock::now();
  const GeneratorStateGuard cpu_generator{c10::Device(c10::kCPU)};  // the network's initial values
  std::optional<GeneratorStateGuard> device_generator;              // its dropout masks
  if (device.is_cuda()) device_generator.emplace(device);
  {
    const std::shared_ptr<model::Classifier> network = model::make_model(model_name);
    network->to(device);
    network->train();
    const at::TensorOptions on_device = at::TensorOptions().device(device);
    const at::Tensor images = at::zeros({batch_size, 1, 28, 28}, on_device.dtype(at::kFloat));
    const at::Tensor labels = at::zeros({batch_size}, on_device.dtype(at::kLong));
    at::Tensor loss;
    {
      const model::AutocastScope autocast(device.type(), bf16);
      loss = at::cross_entropy_loss(network->forward(images).to(at::kFloat), labels);
    }
    torch::autograd::backward({loss});
  }
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return seconds_since(start);
}

}  // namespace mnist_ddp::train
