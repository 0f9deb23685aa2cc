// tests/support/layer_grads.hpp — provides: LayerGrads, run_layer, check_close,
// check_same_gradients: a layer's values and gradients, and their checks against another run.
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/csrc/autograd/function.h>

namespace mnist_ddp::testing {

struct LayerGrads {
  at::Tensor values, input_grad, weight_grad, bias_grad;  // input_grad: undefined if not asked
  std::string node;  // the name of the autograd node that made the values
};

/// f(x, weight, bias) on fresh copies and the gradients of sum(f * upstream): the weight's and the
/// bias's, and the input's only with `input_grad` (otherwise x needs none).
template <typename Function>
LayerGrads run_layer(Function f, const at::Tensor& x, const at::Tensor& weight,
                     const at::Tensor& bias, const at::Tensor& upstream, bool input_grad) {
  const at::Tensor input = x.detach().clone().requires_grad_(input_grad);
  const at::Tensor w = weight.detach().clone().requires_grad_();
  const at::Tensor b = bias.detach().clone().requires_grad_();
  const at::Tensor values = f(input, w, b);
  values.backward(upstream);
  return {values.detach(), input.grad(), w.grad(), b.grad(), values.grad_fn()->name()};
}

/// Checks `ours` against `exact` (in any floating type): the same sizes, values and the input's
/// gradient (where `ours` has one) to 1e-5, the weight's and the bias's to 1e-4.
inline void check_close(const LayerGrads& ours, const LayerGrads& exact) {
  const auto close = [](const at::Tensor& a, const at::Tensor& b, double tolerance) {
    return a.sizes() == b.sizes() && at::allclose(a, b.to(a.scalar_type()), tolerance, tolerance);
  };
  CHECK(close(ours.values, exact.values, 1e-5));
  if (ours.input_grad.defined()) CHECK(close(ours.input_grad, exact.input_grad, 1e-5));
  CHECK(close(ours.weight_grad, exact.weight_grad, 1e-4));
  CHECK(close(ours.bias_grad, exact.bias_grad, 1e-4));
}

/// Checks that `a` and `b` have the same gradients bit for bit: the input's (where `a` has one),
/// the weight's and the bias's.
inline void check_same_gradients(const LayerGrads& a, const LayerGrads& b) {
  if (a.input_grad.defined()) CHECK(at::equal(a.input_grad, b.input_grad));
  CHECK(at::equal(a.weight_grad, b.weight_grad));
  CHECK(at::equal(a.bias_grad, b.bias_grad));
}

}  // namespace mnist_ddp::testing
