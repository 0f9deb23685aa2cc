// lib/model/autocast_scope.cpp — LibTorch 2.4+ keys autocast by device type; 1.13 by function.
#include "model/autocast_scope.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace mnist_ddp::model {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(c10::DeviceType device) { return at::autocast::is_autocast_enabled(device); }
namespace {
c10::ScalarType autocast_dtype(c10::DeviceType device) {
  return at::autocast::get_autocast_dtype(device);
}
void set_autocast(c10::DeviceType device, bool enabled, c10::ScalarType dtype) {
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
}
}  // namespace
#else
bool autocast_enabled(c10::DeviceType device) {
  return device == c10::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
namespace {
c10::ScalarType autocast_dtype(c10::DeviceType device) {
  return device == c10::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                              : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast(c10::DeviceType device, bool enabled, c10::ScalarType dtype) {
  if (device == c10::kCUDA) {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
}  // namespace
#endif

AutocastScope::AutocastScope(c10::DeviceType device, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  previous_enabled_ = autocast_enabled(device_);
  previous_dtype_ = autocast_dtype(device_);
  set_autocast(device_, true, c10::ScalarType::BFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(device_, previous_enabled_, previous_dtype_);
}

}  // namespace mnist_ddp::model
