// lib/train/default_generators.hpp — provides: default_generator, LibTorch's default random
// number generator of a device, and GeneratorStateGuard, which puts one's state back.
#pragma once

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

namespace mnist_ddp::train {

/// LibTorch's default generator of `device`: the CPU's (initial values, dropout on the CPU) or a
/// CUDA device's (dropout there). A handle: changes made through it reach the generator.
inline at::Generator default_generator(c10::Device device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device)
                          : at::detail::getDefaultCPUGenerator();
}

/// Saves the state of `device`'s default generator and puts it back when it goes out of scope.
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

}  // namespace mnist_ddp::train
