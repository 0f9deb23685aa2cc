// tests/unit/test_conv_pooled_features.cpp — conv_pooled_features against ATen's convolution,
// max-pool and ReLU computed in double: values and the input, weight and bias gradients, with
// ties and clipped windows, groups of images, the same bits at any thread count, and the inputs
// the kernel leaves to ATen.
#include <string>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/utils.h>

#include "model/autocast_scope.hpp"
#include "model/fast_cnn_layers.hpp"
#include "support/force_instruction_set.hpp"
#include "support/intra_op_threads.hpp"
#include "support/layer_grads.hpp"

namespace mnist_ddp::testing {
namespace {

using model::conv_pooled_features;

at::Tensor conv_pool_relu(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::max_pool2d(at::conv2d(x, w, b), 2).relu().flatten(1);
}

/// fastcnn's conv2 input: channels-last, 24 channels.
at::Tensor feature_maps(std::int64_t batch, std::int64_t height, std::int64_t width) {
  return at::randn({batch, 24, height, width}).contiguous(at::MemoryFormat::ChannelsLast);
}

at::Tensor conv2_weight(std::int64_t outputs) {
  return (at::randn({outputs, 24, 3, 3}) * 0.1).contiguous(at::MemoryFormat::ChannelsLast);
}

bool cpu_has_avx512() { return model::instruction_set() == model::InstructionSet::kAvx512; }

/// Checks ours against the double definition: the kernel ran (when `fused`), values and all three
/// gradients agree to float rounding.
void check_against_definition(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                              bool fused) {
  const at::Tensor upstream = at::randn_like(conv_pool_relu(x, weight, bias));
  const LayerGrads ours =
      run_layer(conv_pooled_features, x, weight, bias, upstream, /*input_grad=*/true);
  const LayerGrads exact = run_layer(conv_pool_relu, x.to(at::kDouble), weight.to(at::kDouble),
                                     bias.to(at::kDouble), upstream.to(at::kDouble),
                                     /*input_grad=*/true);
  CAPTURE(ours.node);
  CHECK((ours.node.find("ConvPooledFeatures") != std::string::npos) == fused);
  check_close(ours, exact);
}

}  // namespace

TEST_SUITE("conv_pooled_features") {
  TEST_CASE("fastcnn's conv2: the definition's values and gradients") {
    if (!cpu_has_avx512()) {
      WARN_MESSAGE(false, "this CPU lacks AVX-512: only the ATen path is checked");
    }
    torch::manual_seed(31);
    // 19 images: two full groups of images and a partial one.
    check_against_definition(feature_maps(19, 12, 12), conv2_weight(32), at::randn({32}) * 0.1,
                             cpu_has_avx512());
    // A map that is not square, other output channels.
    check_against_definition(feature_maps(3, 10, 14), conv2_weight(40), at::randn({40}) * 0.1,
                             cpu_has_avx512());
  }

  TEST_CASE("constant maps tie every window; windows below zero pass no gradient") {
    torch::manual_seed(32);
    const at::Tensor constant =
        at::full({2, 24, 12, 12}, 0.5f).contiguous(at::MemoryFormat::ChannelsLast);
    // Some channels' constant output is positive (gradient), others' is clipped (none).
    check_against_definition(constant, conv2_weight(32), at::linspace(-1, 1, 32), cpu_has_avx512());
  }

  TEST_CASE("the same bits on one thread and on two") {
    torch::manual_seed(33);
    const at::Tensor x = feature_maps(21, 12, 12);
    const at::Tensor weight = conv2_weight(32);
    const at::Tensor bias = at::randn({32}) * 0.1;
    const at::Tensor upstream = at::randn({21, 800});
    const auto on = [&](int threads) {
      return on_threads(threads, [&] {
        return run_layer(conv_pooled_features, x, weight, bias, upstream, /*input_grad=*/true);
      });
    };
    const LayerGrads one = on(1), two = on(2);
    REQUIRE(one.input_grad.defined());
    check_same_gradients(one, two);
  }

  TEST_CASE("under autocast (--precision bf16) the layer still computes in float32") {
    torch::manual_seed(35);
    const at::Tensor x = feature_maps(9, 12, 12);
    const at::Tensor weight = conv2_weight(32);
    const at::Tensor bias = at::randn({32}) * 0.1;
    const at::Tensor upstream = at::randn({9, 800});
    const LayerGrads plain =
        run_layer(conv_pooled_features, x, weight, bias, upstream, /*input_grad=*/true);
    const auto under_autocast = [](const at::Tensor& in, const at::Tensor& w, const at::Tensor& b) {
      const model::AutocastScope bf16(c10::kCPU, /*enabled=*/true);
      return conv_pooled_features(in, w, b);
    };
    const LayerGrads cast =
        run_layer(under_autocast, x, weight, bias, upstream, /*input_grad=*/true);
    CHECK(cast.node == plain.node);
    CHECK(cast.values.dtype() == at::kFloat);
    CHECK(at::equal(cast.values, plain.values));
    REQUIRE(cast.input_grad.defined());
    check_same_gradients(cast, plain);
  }

  TEST_CASE("inputs the kernel does not take go through ATen, with the same results") {
    torch::manual_seed(34);
    const at::Tensor bias = at::randn({32}) * 0.1;
    // 16 input channels: the kernel is compiled for 24.
    check_against_definition(at::randn({2, 16, 12, 12}).contiguous(at::MemoryFormat::ChannelsLast),
                             (at::randn({32, 16, 3, 3}) * 0.1), bias, /*fused=*/false);
    // Contiguous (not channels-last) maps, a 5x5 kernel, an odd convolution output.
    check_against_definition(at::randn({2, 24, 12, 12}), conv2_weight(32), bias, /*fused=*/false);
    check_against_definition(
        feature_maps(2, 14, 14),
        (at::randn({32, 24, 5, 5}) * 0.1).contiguous(at::MemoryFormat::ChannelsLast), bias,
        /*fused=*/false);
    check_against_definition(feature_maps(2, 13, 12), conv2_weight(32), bias, /*fused=*/false);
    // A CPU without AVX-512 (the kernel's only instruction set).
    const ForceInstructionSet avx2(model::InstructionSet::kAvx2);
    check_against_definition(feature_maps(2, 12, 12), conv2_weight(32), bias, /*fused=*/false);
  }
}

}  // namespace mnist_ddp::testing
