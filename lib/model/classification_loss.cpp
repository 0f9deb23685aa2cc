// lib/model/classification_loss.cpp — softmax cross-entropy in one pass and its gradient.
#include "model/classification_loss.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include "common/error.hpp"

namespace mnist_ddp::model {
namespace {

// Note [One pass for the loss]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// ATen's cross-entropy is log_softmax then nll_loss, two autograd nodes whose backward scatters
// into a zero-filled gradient: on a model as small as linear, a step's largest cost after its
// GEMMs. On the CPU one pass gives the loss and the logits' gradient, (softmax - one-hot) / B, in
// one node; the backward scales it. Elsewhere (a GPU), ATen's operators.

class SoftmaxCrossEntropy : public torch::autograd::Function<SoftmaxCrossEntropy> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& logits,
                            const at::Tensor& targets) {
    const at::Tensor x = logits.contiguous();
    const at::Tensor t = targets.to(at::kLong).contiguous();
    const std::int64_t batch = x.size(0);
    const std::int64_t classes = x.size(1);
    at::Tensor gradient = at::empty_like(x);
    const float* row = x.data_ptr<float>();
    const std::int64_t* target = t.data_ptr<std::int64_t>();
    float* out = gradient.data_ptr<float>();
    double sum = 0;
    for (std::int64_t b = 0; b < batch; ++b, row += classes, out += classes) {
      const std::int64_t k = target[b];
      if (k < 0 || k >= classes) {
        throw Error(ExitCode::kFailure, "classification_loss: target " + std::to_string(k) +
                                            " is not one of " + std::to_string(classes) +
                                            " classes");
      }
      const float largest = *std::max_element(row, row + classes);
      float exp_sum = 0;
      for (std::int64_t c = 0; c < classes; ++c) exp_sum += (out[c] = std::exp(row[c] - largest));
      sum += std::log(exp_sum) - (row[k] - largest);
      const float scale = 1.0F / (exp_sum * static_cast<float>(batch));
      for (std::int64_t c = 0; c < classes; ++c) out[c] *= scale;
      out[k] -= 1.0F / static_cast<float>(batch);
    }
    context->save_for_backward({gradient});
    return at::scalar_tensor(sum / static_cast<double>(batch), x.options());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 const torch::autograd::variable_list& grads) {
    return {context->get_saved_variables()[0] * grads[0], at::Tensor()};
  }
};

}  // namespace

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& targets) {
  const at::Tensor x = logits.to(at::kFloat);
  if (!x.is_cpu() || x.dim() != 2 || x.size(0) == 0) return at::cross_entropy_loss(x, targets);
  RECORD_FUNCTION("mnist_ddp::classification_loss", std::vector<c10::IValue>{x});
  return SoftmaxCrossEntropy::apply(x, targets);
}

}  // namespace mnist_ddp::model
