// lib/model/autocast_scope.hpp — provides: AutocastScope, --precision bf16 for the forward passes
// of one scope, and autocast_enabled(device), on LibTorch 1.13 and 2.x alike.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace mnist_ddp::model {

/// Whether the calling thread's forward passes on `device` run under LibTorch's autocast now.
bool autocast_enabled(c10::DeviceType device);

/// While alive (and `enabled`), the calling thread's forward passes on `device` run matrix
/// products and convolutions in bfloat16 (LibTorch's autocast, as torch.autocast does); parameters
/// stay float32, so gradients and the optimizer work in float32. Backward needs no scope: it
/// follows the types the forward recorded. The destructor restores the previous state and, as
/// torch.autocast, clears the cache of cast weights when the outermost scope ends.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

}  // namespace mnist_ddp::model
