// lib/model/make_model.cpp — the network of each --model.
#include <array>

#include "model/classifier.hpp"

namespace mnist_ddp::model {

std::shared_ptr<Classifier> make_model(config::Model model) {
  // In the order of config::Model's enumerators.
  constexpr std::array makers = {make_linear_net, make_mlp_net, make_cnn_net, make_fast_cnn_net};
  return makers.at(static_cast<std::size_t>(model))();
}

}  // namespace mnist_ddp::model
