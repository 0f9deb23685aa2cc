// lib/model/dropout.hpp — provides: inverted_dropout, inverted dropout whose CPU masks cost a third
// of LibTorch's.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// Inverted dropout: in training, each element is zeroed with probability p and the rest are
/// scaled by 1 / (1 - p); otherwise x itself. Masks come from LibTorch's default generator of
/// x's device, so seeding and checkpointed generator state govern them. See Note [Dropout
/// masks] in dropout.cpp.
at::Tensor inverted_dropout(const at::Tensor& x, double p, bool training);

}  // namespace mnist_ddp::model
