// lib/ddp/gradient_reducer.cpp — buckets, autograd hooks and in-order asynchronous allreduce.
#include "ddp/gradient_reducer.hpp"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace mnist_ddp::ddp {
namespace {

// A stop request flags 1, a loss that is not finite this: the flags' sum tells them apart for any
// world size below 2^14, on a float16 or bfloat16 wire too (Note [Stop agreement]).
constexpr double kNotFiniteFlag = 32768;

}  // namespace

void broadcast_parameters(distributed::Communicator& comm, torch::nn::Module& module,
                          bool communicate) {
  if (!communicate) return;
  torch::NoGradGuard no_grad;  // writing into leaf tensors that require grad
  const auto broadcast = [&comm](at::Tensor& tensor) {
    // MPI needs dense row-major memory; channels-last weights travel as a contiguous copy.
    at::Tensor buffer = tensor.contiguous();
    comm.broadcast(buffer, /*root=*/0);
    if (!buffer.is_same(tensor)) tensor.copy_(buffer);
  };
  for (at::Tensor tensor : module.parameters()) broadcast(tensor);
  for (at::Tensor tensor : module.buffers()) broadcast(tensor);
}

GradientReducer::GradientReducer(distributed::Communicator& comm,
                                 const std::vector<at::Tensor>& parameters, double bucket_mb,
                                 at::ScalarType wire_dtype, bool communicates)
    : comm_(comm), communicates_(communicates), got_gradient_(parameters.size(), false) {
  const auto cap = static_cast<std::int64_t>(bucket_mb * 1024 * 1024);
  // Group in reverse registration order: the last layer's gradients are ready first.
  std::vector<std::vector<size_t>> groups;
  std::int64_t bytes = 0;
  for (size_t i = parameters.size(); i-- > 0;) {
    const std::int64_t size =
        parameters[i].numel() * static_cast<std::int64_t>(at::elementSize(wire_dtype));
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
    for (size_t i : groups[b]) total += parameters[i].numel();
    const bool last = b + 1 == groups.size();
    bucket.flat = at::zeros({total + (last ? 1 : 0)}, parameters[groups[b][0]].options());
    bucket.gradients = bucket.flat.narrow(0, 0, total);
    if (wire_dtype != at::kFloat) bucket.wire = at::empty_like(bucket.flat, wire_dtype);
    std::int64_t offset = 0;
    for (size_t i : groups[b]) {
      const at::Tensor& p = parameters[i];
      // Autograd accumulates into the bucket in place; the view keeps the parameter's strides.
      p.mutable_grad() =
          bucket.flat.narrow(0, offset, p.numel()).as_strided(p.sizes(), p.strides());
      offset += p.numel();
    }
    if (last) stop_flag_ = bucket.flat.narrow(0, total, 1);
    buckets_.push_back(std::move(bucket));
  }

  // Hooks only once every bucket exists: a constructor that throws leaves none pointing at it.
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (size_t i : buckets_[b].parameters) {
      // A std::shared_ptr in LibTorch 2.6, a c10::intrusive_ptr in 2.14 (pytorch/pytorch#181782).
      auto accumulator = torch::autograd::impl::grad_accumulator(parameters[i]);
      const std::uintptr_t key =
          accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
              [this, b, i](const torch::autograd::variable_list& outputs,
                           const torch::autograd::variable_list&) {
                on_gradient_ready(b, i);
                return outputs;
              }));
      remove_hooks_.emplace_back([accumulator, key] { accumulator->del_post_hook(key); });
    }
  }
}

GradientReducer::~GradientReducer() {
  for (const std::function<void()>& remove_hook : remove_hooks_) remove_hook();
}

std::int64_t GradientReducer::bytes_per_step() const {
  std::int64_t bytes = 0;
  for (const Bucket& bucket : buckets_) bytes += static_cast<std::int64_t>(bucket.sent().nbytes());
  return bytes;
}

void GradientReducer::zero_grad() {
  for (Bucket& bucket : buckets_) bucket.gradients.zero_();
}

void GradientReducer::request_stop(bool stop_requested) {
  stop_flag_.fill_(stop_requested ? 1.0 : 0.0);
}

void GradientReducer::stop_if_not_finite(const at::Tensor& loss) {
  if (loss.is_cpu()) {  // a CPU value is read at once: one read, not seven operators
    if (!std::isfinite(loss.item<double>())) stop_flag_.fill_(kNotFiniteFlag);
    return;
  }
  stop_flag_.copy_(at::maximum(
      stop_flag_, at::logical_not(at::isfinite(loss).all()).to(at::kFloat) * kNotFiniteFlag));
}

void GradientReducer::prepare_backward(bool communicate) {
  communicate_ = communicate && communicates_;
  for (Bucket& bucket : buckets_) bucket.pending = bucket.parameters.size();
  next_to_launch_ = 0;
  if (communicate_) timings_.clear();
}

// Note [Bucket launch order]: ranks pair collectives by issue order, and autograd's order can
// differ between ranks, so (as PyTorch's reducer) buckets launch strictly by index; one missing a
// gradient holds itself and the later ones back to finish() (as find_unused_parameters=True).
void GradientReducer::on_gradient_ready(size_t index, size_t parameter) {
  got_gradient_[parameter] = true;
  if (!communicate_) return;
  if (--buckets_[index].pending == 0) {
    while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].pending == 0) {
      launch(buckets_[next_to_launch_++]);
    }
  }
  // MPI progresses non-blocking collectives only inside MPI calls: give those in flight a turn.
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
  timings_.push_back(
      {std::chrono::steady_clock::now(), {}, static_cast<std::int64_t>(bucket.sent().nbytes())});
  if (!bucket.wire.defined()) {
    bucket.work = comm_.all_reduce_async(bucket.flat, distributed::ReduceOp::kAverage);
  } else {
    // Note [Bucketed gradient reduction]: divide in float32 in place, then round once. The stop
    // flag becomes 1/size, so its sum is still > 0 if any rank asked to stop.
    bucket.flat.div_(comm_.size());
    bucket.wire.copy_(bucket.flat);
    bucket.work = comm_.all_reduce_async(bucket.wire, distributed::ReduceOp::kSum);
  }
}

void GradientReducer::finish() {
  if (communicate_) {
    // Note [Bucket launch order]: the buckets held back by a parameter without a gradient.
    while (next_to_launch_ < buckets_.size()) launch(buckets_[next_to_launch_++]);
    for (Bucket& bucket : buckets_) {
      progress(bucket, /*block=*/true);
      if (bucket.wire.defined()) bucket.flat.copy_(bucket.wire);  // the average already
    }
    last_unused_ =
        static_cast<std::size_t>(std::count(got_gradient_.begin(), got_gradient_.end(), false));
  }
  std::fill(got_gradient_.begin(), got_gradient_.end(), false);
}

StopReason GradientReducer::any_rank_stopping() const {
  // The sum of the flags: averaged where the step communicated.
  const double sum = stop_flag_.item<float>() * (communicate_ ? comm_.size() : 1);
  if (sum >= kNotFiniteFlag / 2) return StopReason::kNotFinite;
  return sum > 0 ? StopReason::kRequested : StopReason::kNone;
}

}  // namespace mnist_ddp::ddp
