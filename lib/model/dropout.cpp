// lib/model/dropout.cpp — dropout with masks from a float uniform draw on the CPU.
#include "model/dropout.hpp"

#include <ATen/ATen.h>

namespace mnist_ddp::model {

// Note [Dropout masks]
// ~~~~~~~~~~~~~~~~~~~~
// Without MKL, LibTorch's CPU bernoulli_ draws a double per element; a float uniform compared with
// the keep probability is the same Bernoulli(1 - p) mask, far cheaper. CUDA keeps at::dropout's
// fused kernel. rand_like keeps x's layout (channels-last too), so the product stays contiguous.
at::Tensor inverted_dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p == 0.0) return x;
  if (!x.is_cpu()) return at::dropout(x, p, /*train=*/true);
  const double keep = 1.0 - p;
  // Drawn in float whatever x's type: a bfloat16 uniform has 8 bits, too coarse for p.
  const at::Tensor uniform = at::rand_like(x, x.options().dtype(at::kFloat));
  const at::Tensor scale = uniform.lt_(keep).mul_(1.0 / keep);  // 0 or 1 / keep
  return x * scale.to(x.scalar_type());
}

}  // namespace mnist_ddp::model
