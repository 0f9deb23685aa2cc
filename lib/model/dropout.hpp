// lib/model/dropout.hpp — provides: inverted_dropout, with cheaper CPU masks than LibTorch's.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p). Masks
/// come from x's device's default generator, so seeds and checkpoints govern them.
at::Tensor inverted_dropout(const at::Tensor& x, double p, bool training);

}  // namespace mnist_ddp::model
