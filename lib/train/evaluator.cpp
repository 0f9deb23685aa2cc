// lib/train/evaluator.cpp — sharded evaluation.
#include "train/evaluator.hpp"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "model/autocast_scope.hpp"

namespace mnist_ddp::train {

EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, distributed::Communicator& comm,
                    int batch_size, bool bf16) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();

  const at::Device device = dataset.images.device();
  const at::Tensor shard = at::arange(comm.rank(), dataset.size(), comm.size(),
                                      at::TensorOptions(at::kLong).device(device));
  // Double sums, so splitting into batches and ranks changes only a double's last bits.
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions(at::kDouble).device(device));
  at::Tensor correct = at::zeros({}, at::TensorOptions(at::kLong).device(device));
  for (std::int64_t start = 0; start < shard.size(0); start += batch_size) {
    const data::Batch batch = batches.make(
        shard.narrow(0, start, std::min<std::int64_t>(batch_size, shard.size(0) - start)));
    const at::Tensor logits = [&] {
      const model::AutocastScope autocast(device.type(), bf16);
      return model.forward(batch.inputs);
    }();
    loss_sum +=
        at::cross_entropy_loss(logits.to(at::kDouble), batch.targets, {}, at::Reduction::Sum);
    correct += logits.argmax(1).eq(batch.targets).sum();
  }
  at::Tensor totals =
      at::stack({loss_sum.cpu(), correct.cpu().to(at::kDouble),
                 at::scalar_tensor(static_cast<double>(shard.size(0)), at::kDouble)});
  comm.all_reduce(totals, distributed::ReduceOp::kSum);
  if (was_training) model.train();

  EvalResult result;
  result.count = static_cast<std::int64_t>(totals[2].item<double>());
  result.correct = static_cast<std::int64_t>(totals[1].item<double>());
  result.loss = totals[0].item<double>() / static_cast<double>(result.count);
  result.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.count);
  return result;
}

}  // namespace mnist_ddp::train
