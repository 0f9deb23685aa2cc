// lib/model/model_export.hpp — provides: export_model, the trained network alone for inference.
#pragma once

#include <string>

#include <torch/nn/module.h>

namespace mnist_ddp::model {

/// Saves the module's parameters and buffers atomically in LibTorch's own format, so that
/// `torch::load(model, path)` into the same network (mnist_ddp::model::make_model) restores it.
void export_model(const torch::nn::Module& model, const std::string& path);

}  // namespace mnist_ddp::model
