// lib/ddp/gradient_reducer.cpp — buckets, autograd hooks and asynchronous allreduce.
#include "ddp/gradient_reducer.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace mnist_ddp::ddp {

GradientReducer::GradientReducer(distributed::Communicator& comm,
                                 std::vector<at::Tensor> parameters, double bucket_mb,
                                 at::ScalarType wire_dtype)
    : comm_(comm), parameters_(std::move(parameters)), wire_dtype_(wire_dtype) {
  const auto cap = static_cast<std::int64_t>(bucket_mb * 1024 * 1024);
  // Group in reverse registration order: the last layer's gradients are ready first.
  std::vector<std::vector<size_t>> groups;
  std::int64_t bytes = 0;
  for (size_t i = parameters_.size(); i-- > 0;) {
    const std::int64_t size = parameters_[i].numel() * 4;
    if (groups.empty() || (bytes + size > cap && bytes > 0)) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += size;
  }

  for (size_t b = 0; b < groups.size(); ++b) {
    Bucket bucket;
    bucket.parameters = groups[b];
    std::int64_t total = 0;
    for (size_t i : groups[b]) total += parameters_[i].numel();
    const bool last = b + 1 == groups.size();
    bucket.flat = at::zeros({total + (last ? 1 : 0)}, parameters_[groups[b][0]].options());
    if (wire_dtype_ != at::kFloat) bucket.wire = at::empty_like(bucket.flat, wire_dtype_);
    std::int64_t offset = 0;
    for (size_t i : groups[b]) {
      at::Tensor& p = parameters_[i];
      // From now on the gradient lives in the bucket; autograd accumulates into it in place.
      // With the parameter's own strides (channels-last weights included), as autograd expects.
      p.mutable_grad() =
          bucket.flat.narrow(0, offset, p.numel()).as_strided(p.sizes(), p.strides());
      offset += p.numel();
    }
    if (last) stop_flag_ = bucket.flat.narrow(0, total, 1);
    buckets_.push_back(std::move(bucket));
  }

  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (size_t i : buckets_[b].parameters) {
      std::shared_ptr<torch::autograd::Node> accumulator =
          torch::autograd::impl::grad_accumulator(parameters_[i]);
      const std::uintptr_t key =
          accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
              [this, b](const torch::autograd::variable_list& outputs,
                        const torch::autograd::variable_list&) {
                on_gradient_ready(b);
                return outputs;
              }));
      hooks_.emplace_back(std::move(accumulator), key);
    }
  }
}

GradientReducer::~GradientReducer() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

void GradientReducer::zero_grad() {
  for (Bucket& bucket : buckets_) bucket.flat.zero_();
}

void GradientReducer::prepare_backward(bool communicate, bool stop_requested) {
  communicate_ = communicate && comm_.size() > 1;
  for (Bucket& bucket : buckets_) bucket.pending = bucket.parameters.size();
  if (communicate_) timings_.clear();
  stop_flag_.fill_(stop_requested ? 1.0 : 0.0);
}

void GradientReducer::on_gradient_ready(size_t index) {
  if (!communicate_) return;
  Bucket& bucket = buckets_[index];
  if (--bucket.pending == 0) launch(bucket);
  // MPI progresses non-blocking collectives only inside MPI calls: give the ones in flight a
  // turn while backward goes on.
  for (Bucket& other : buckets_) progress(other, /*block=*/false);
}

void GradientReducer::progress(Bucket& bucket, bool block) {
  if (!bucket.work) return;
  if (block) {
    bucket.work->wait();
  } else if (!bucket.work->test()) {
    return;
  }
  timings_[bucket.timing].done = std::chrono::steady_clock::now();
  bucket.work.reset();
}

void GradientReducer::launch(Bucket& bucket) {
  bucket.timing = timings_.size();
  timings_.push_back({std::chrono::steady_clock::now(),
                      {},
                      bucket.flat.numel() *
                          static_cast<std::int64_t>(
                              (bucket.wire.defined() ? bucket.wire : bucket.flat).element_size())});
  if (wire_dtype_ == at::kFloat) {
    bucket.work = comm_.all_reduce_async(bucket.flat, distributed::ReduceOp::kAverage);
  } else {
    bucket.wire.copy_(bucket.flat);
    bucket.work = comm_.all_reduce_async(bucket.wire, distributed::ReduceOp::kSum);
  }
}

void GradientReducer::finish() {
  if (!communicate_) return;
  // Buckets holding a parameter that got no gradient in this backward never counted down.
  for (Bucket& bucket : buckets_) {
    if (bucket.pending > 0) launch(bucket);
  }
  for (Bucket& bucket : buckets_) {
    progress(bucket, /*block=*/true);
    if (wire_dtype_ != at::kFloat) bucket.flat.copy_(bucket.wire).div_(comm_.size());
  }
}

bool GradientReducer::any_rank_stopping() const {
  return stop_flag_.item<float>() > 0;  // the average of 0/1 flags is > 0 if any was 1
}

}  // namespace mnist_ddp::ddp
