// lib/ddp/model_replicas.hpp — provides: ModelReplicas, single-process DataParallel (--mode dp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "data/batch_maker.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::ddp {

/// Note [DataParallel replicas]: each GPU keeps one replica for the whole run (LibTorch's
/// data_parallel clones per batch); one autograd call runs every backward, the primary alone steps.
class ModelReplicas {
 public:
  /// `primary` is on devices[0]; builds a copy of it, an `architecture`, on each other device.
  ModelReplicas(model::Classifier& primary, config::Model architecture,
                std::vector<c10::Device> devices);

  size_t size() const { return devices_.size(); }

  /// Images in the first (largest) chunk of a batch of `batch_size` scattered over `replicas`.
  static std::int64_t chunk_size(std::int64_t batch_size, size_t replicas);

  /// One loss per chunk, weighted by its share of the batch, so one backward of them all gives
  /// the gradient of the batch's mean loss. Small batches leave the last replicas without a chunk.
  std::vector<at::Tensor> weighted_losses(const data::Batch& batch);

  /// Adds every other replica's gradients into the primary's and zeroes them there.
  void gather_gradients();

  /// Copies the primary's parameters and buffers to the replicas (after a step or a restore).
  void broadcast_parameters();

 private:
  model::Classifier& primary_;
  std::vector<c10::Device> devices_;
  std::vector<std::shared_ptr<model::Classifier>> others_;  // on devices_[1..]
};

}  // namespace mnist_ddp::ddp
