// lib/model/make_model.cpp — the registry of networks by name.
#include "common/error.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::model {

std::shared_ptr<Classifier> make_model(const std::string& name) {
  if (name == "linear") return make_linear_net();
  if (name == "mlp") return make_mlp_net();
  if (name == "cnn") return make_cnn_net();
  if (name == "fastcnn") return make_fast_cnn_net();
  throw UsageError("unknown model '" + name + "' (choose linear, mlp, cnn or fastcnn)");
}

}  // namespace mnist_ddp::model
