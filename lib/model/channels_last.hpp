// lib/model/channels_last.hpp — provides: to_channels_last, channels_last_input.
#pragma once

#include <initializer_list>

#include <ATen/ATen.h>

namespace mnist_ddp::model {

/// Each weight's data to NHWC, in place (the parameter stays the same tensor).
inline void to_channels_last(std::initializer_list<at::Tensor> weights) {
  for (at::Tensor weight : weights) {
    weight.set_data(weight.contiguous(at::MemoryFormat::ChannelsLast));
  }
}

/// A copy of `images` in explicit channels-last strides: with one channel, NCHW strides already
/// count as channels-last, and oneDNN would take the input for NCHW.
inline at::Tensor channels_last_input(const at::Tensor& images) {
  return at::empty_like(images, at::MemoryFormat::ChannelsLast).copy_(images);
}

}  // namespace mnist_ddp::model
