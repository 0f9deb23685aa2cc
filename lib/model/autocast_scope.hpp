// lib/model/autocast_scope.hpp — provides: AutocastScope (--precision bf16), autocast_enabled.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace mnist_ddp::model {

/// Whether autocast is on for `device` in the calling thread.
bool autocast_enabled(c10::DeviceType device);

/// While alive and `enabled`, forwards on `device` in this thread autocast to bfloat16 (weights
/// stay float32; backward needs no scope); the outermost scope's end clears the cast-weight cache.
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
