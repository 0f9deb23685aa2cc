// lib/train/default_generators.hpp — provides: default_generator, GeneratorStateGuard.
#pragma once

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

namespace mnist_ddp::train {

/// LibTorch's default generator of `device`; a handle, so changes through it reach the generator.
inline at::Generator default_generator(c10::Device device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device)
                          : at::detail::getDefaultCPUGenerator();
}

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

}  // namespace mnist_ddp::train
