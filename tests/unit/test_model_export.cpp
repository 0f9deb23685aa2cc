// tests/unit/test_model_export.cpp — export_model: torch::load into a fresh network of the same
// name restores every parameter bit for bit; a missing folder is an error.
#include <string>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "config/train_config.hpp"
#include "model/classifier.hpp"
#include "model/model_export.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using model::export_model;
using model::make_model;

/// True when both networks hold the same named parameters and buffers, bit for bit.
bool same_state(model::Classifier& a, model::Classifier& b) {
  const auto pa = a.named_parameters();
  const auto pb = b.named_parameters();
  const auto ba = a.named_buffers();
  const auto bb = b.named_buffers();
  if (pa.size() != pb.size() || ba.size() != bb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (pa[i].key() != pb[i].key() || !same_bits(pa[i].value(), pb[i].value())) return false;
  }
  for (std::size_t i = 0; i < ba.size(); ++i) {
    if (ba[i].key() != bb[i].key() || !same_bits(ba[i].value(), bb[i].value())) return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("export_model") {
  TEST_CASE("torch::load into a fresh network restores every parameter bit for bit") {
    TempDir dir;
    for (const config::Model architecture :
         {config::Model::kLinear, config::Model::kMlp, config::Model::kCnn}) {
      const std::string name = config::to_string(architecture);
      CAPTURE(name);
      const std::string path = dir.file(name + ".pt");
      torch::manual_seed(21);
      const auto trained = make_model(architecture);
      export_model(*trained, path);

      torch::manual_seed(22);
      auto fresh = make_model(architecture);
      REQUIRE_FALSE(same_state(*trained, *fresh));  // otherwise loading would prove nothing
      torch::load(fresh, path);
      CHECK(same_state(*trained, *fresh));

      // The restored network computes the same logits (eval mode: no dropout).
      trained->eval();
      fresh->eval();
      const at::Tensor images = at::randn({2, 1, 28, 28});
      CHECK(same_bits(trained->forward(images), fresh->forward(images)));
    }
  }

  TEST_CASE("exporting over an existing file replaces it") {
    TempDir dir;
    const std::string path = dir.file("model.pt");
    torch::manual_seed(1);
    const auto first = make_model(config::Model::kLinear);
    export_model(*first, path);
    torch::manual_seed(2);
    const auto second = make_model(config::Model::kLinear);
    export_model(*second, path);

    torch::manual_seed(3);
    auto loaded = make_model(config::Model::kLinear);
    torch::load(loaded, path);
    CHECK(same_state(*second, *loaded));
  }

  TEST_CASE("exporting into a missing folder is an Error naming it") {
    TempDir dir;
    const std::string folder = dir.file("missing");
    const auto net = make_model(config::Model::kLinear);
    const std::string message =
        error_message<Error>([&] { export_model(*net, folder + "/model.pt"); });
    INFO("message: ", message);
    CHECK(contains(message, folder + "/"));
    CHECK(contains(message, "model.pt"));
  }
}

}  // namespace mnist_ddp::testing
