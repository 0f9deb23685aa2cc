// lib/ddp/model_replicas.cpp — scatter, forward, gather gradients, broadcast parameters.
#include "ddp/model_replicas.hpp"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "model/classification_loss.hpp"

namespace mnist_ddp::ddp {

ModelReplicas::ModelReplicas(model::Classifier& primary, config::Model architecture,
                             std::vector<c10::Device> devices)
    : primary_(primary), devices_(std::move(devices)) {
  for (size_t r = 1; r < devices_.size(); ++r) {
    std::shared_ptr<model::Classifier> replica = model::make_model(architecture);
    replica->to(devices_[r]);
    replica->train(primary_.is_training());
    others_.push_back(std::move(replica));
  }
  broadcast_parameters();
}

std::int64_t ModelReplicas::chunk_size(std::int64_t batch_size, size_t replicas) {
  const auto count = static_cast<std::int64_t>(replicas);
  return (batch_size + count - 1) / count;
}

std::vector<at::Tensor> ModelReplicas::weighted_losses(const data::Batch& batch) {
  const std::int64_t total = batch.inputs.size(0);
  const std::int64_t chunk = chunk_size(total, size());
  std::vector<at::Tensor> losses;
  for (size_t r = 0; r < size() && static_cast<std::int64_t>(r) * chunk < total; ++r) {
    const std::int64_t first = static_cast<std::int64_t>(r) * chunk;
    const std::int64_t count = std::min(chunk, total - first);
    model::Classifier& model = r == 0 ? primary_ : *others_[r - 1];
    if (model.is_training() != primary_.is_training()) model.train(primary_.is_training());
    const at::Tensor inputs = batch.inputs.narrow(0, first, count).to(devices_[r]);
    const at::Tensor targets = batch.targets.narrow(0, first, count).to(devices_[r]);
    const at::Tensor loss = model::classification_loss(model.forward(inputs), targets);
    losses.push_back(loss * (static_cast<double>(count) / static_cast<double>(total)));
  }
  return losses;
}

void ModelReplicas::gather_gradients() {
  const std::vector<at::Tensor> primary = primary_.parameters();
  for (const std::shared_ptr<model::Classifier>& replica : others_) {
    const std::vector<at::Tensor> parameters = replica->parameters();
    for (size_t i = 0; i < parameters.size(); ++i) {
      at::Tensor grad = parameters[i].grad();
      if (!grad.defined()) continue;  // this replica never had a chunk yet
      // Copy even on the same device (CPU tests): `grad` is zeroed next.
      const at::Tensor moved = grad.to(devices_[0], grad.scalar_type(), /*non_blocking=*/false,
                                       /*copy=*/true);
      at::Tensor& into = primary[i].mutable_grad();
      if (into.defined()) {
        into.add_(moved);
      } else {
        into = moved;
      }
      grad.zero_();
    }
  }
}

void ModelReplicas::broadcast_parameters() {
  torch::NoGradGuard no_grad;  // writing into leaf tensors that require grad
  for (const std::shared_ptr<model::Classifier>& replica : others_) {
    for (const auto& [source, target] : {std::pair(primary_.parameters(), replica->parameters()),
                                         std::pair(primary_.buffers(), replica->buffers())}) {
      for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
    }
  }
}

}  // namespace mnist_ddp::ddp
