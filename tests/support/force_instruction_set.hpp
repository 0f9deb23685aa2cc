// tests/support/force_instruction_set.hpp — provides: ForceInstructionSet, forget_paths and
// paths_taken: a cap on the fused kernels' instruction set, and their path record as text.
#pragma once

#include <string>

#include "model/cpu_kernels.hpp"

namespace mnist_ddp::testing {

/// While alive, the fused kernels use at most `cap`: the AVX2 kernels, say, on an AVX-512 CPU.
class ForceInstructionSet {
 public:
  explicit ForceInstructionSet(model::InstructionSet cap)
      : previous_(model::instruction_set_cap.exchange(cap)) {}
  ~ForceInstructionSet() { model::instruction_set_cap = previous_; }
  ForceInstructionSet(const ForceInstructionSet&) = delete;
  ForceInstructionSet& operator=(const ForceInstructionSet&) = delete;

 private:
  model::InstructionSet previous_;
};

/// Every pass of model::last_paths back to kNotRun.
inline void forget_paths() {
  for (auto* path :
       {&model::last_paths.input_conv_pool, &model::last_paths.input_conv_pool_backward,
        &model::last_paths.conv_pooled_features,
        &model::last_paths.conv_pooled_features_backward}) {
    *path = model::KernelPath::kNotRun;
  }
}

inline std::string to_string(model::KernelPath path) {
  constexpr const char* kNames[] = {"not run", "ATen", "AVX2", "AVX-512"};
  return kNames[static_cast<int>(path)];
}

/// model::last_paths as "input_conv_pool P/P, conv_pooled_features P/P" (forward/backward).
inline std::string paths_taken() {
  const model::LastPaths& p = model::last_paths;
  return "input_conv_pool " + to_string(p.input_conv_pool) + "/" +
         to_string(p.input_conv_pool_backward) + ", conv_pooled_features " +
         to_string(p.conv_pooled_features) + "/" + to_string(p.conv_pooled_features_backward);
}

}  // namespace mnist_ddp::testing
