// lib/model/classification_loss.hpp — provides: classification_loss, every training step's loss.
#pragma once

#include <ATen/core/Tensor.h>

namespace mnist_ddp::model {

/// The mean cross-entropy of `logits` (B, C) against class indices `targets` (B), in float32
/// whatever precision the forward ran in. On the CPU one fused pass (Note [One pass for the loss]).
at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace mnist_ddp::model
