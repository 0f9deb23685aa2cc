// lib/model/model_export.hpp — provides: export_model, the trained network alone for inference.
#pragma once

#include <string>

#include <torch/nn/module.h>

namespace mnist_ddp::model {

/// Saves parameters and buffers atomically; `torch::load` into the same network restores them.
void export_model(const torch::nn::Module& model, const std::string& path);

}  // namespace mnist_ddp::model
