// lib/ddp/model_replicas.hpp — provides: ModelReplicas, the single-process DataParallel mode
// (--mode dp): one model replica per GPU for the whole run, the batch scattered across them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "data/batch_maker.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::ddp {

/// Note [DataParallel replicas]. --mode dp trains on every visible GPU from one process, as
/// torch.nn.DataParallel does, without its per-step costs: LibTorch's
/// torch::nn::parallel::data_parallel deep-clones the module for every batch, and Python's
/// DataParallel broadcasts the parameters before every forward. Here each GPU keeps one replica
/// for the whole run. A step scatters the batch in contiguous chunks (as DataParallel does),
/// runs every chunk's forward on its replica (kernels of all GPUs queue without waiting for
/// each other), then one autograd call runs all backward passes at once, one autograd thread per
/// GPU. The replicas' gradients are added into the primary model's on the first GPU, the
/// optimizer steps there alone, and the new parameters are copied back to the replicas. Every
/// step thus moves the model twice over the GPU links; DDP instead reduces gradients in place,
/// with no primary.
class ModelReplicas {
 public:
  /// `primary` lives on devices[0] already; builds a replica of `model_name` on each other device,
  /// with the primary's parameters.
  ModelReplicas(model::Classifier& primary, const std::string& model_name,
                std::vector<c10::Device> devices);

  size_t size() const { return devices_.size(); }

  /// Images in the first (largest) chunk of a batch of `batch_size` scattered over `replicas`.
  static std::int64_t chunk_size(std::int64_t batch_size, size_t replicas);

  /// The batch (on devices[0]) in one chunk per replica (the last ones smaller, or absent for a
  /// batch smaller than the replica count), each chunk's mean loss weighted by its share of the
  /// batch: together, one backward of all of them gives the gradient of the batch's mean loss.
  std::vector<at::Tensor> weighted_losses(const data::Batch& batch);

  /// Adds every other replica's gradients into the primary's and zeroes them there.
  void gather_gradients();

  /// Copies the primary's parameters and buffers to every other replica (after the optimizer
  /// step, after restoring a checkpoint).
  void broadcast_parameters();

 private:
  model::Classifier& primary_;
  std::vector<c10::Device> devices_;
  std::vector<std::shared_ptr<model::Classifier>> others_;  // on devices_[1..]
};

}  // namespace mnist_ddp::ddp
