// lib/ddp/gradient_reducer.hpp — provides: GradientReducer, which averages gradients across
// ranks in buckets that start communicating while backward is still running.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "distributed/communicator.hpp"

namespace torch::autograd {
struct Node;
}

namespace mnist_ddp::ddp {

/// Note [Bucketed gradient reduction]. Parameters are grouped into buckets in reverse
/// registration order (the order backward produces their gradients), each at most `bucket_mb`
/// MB (a parameter larger than that gets a bucket of its own). Every gradient is a view into its
/// bucket's flat buffer, so nothing is copied in or out per step. An autograd hook on each
/// parameter's gradient accumulator counts the bucket down; when its last gradient has arrived
/// the bucket's allreduce starts at once (asynchronously), and finish() waits for all of them,
/// then divides by the world size (Note [Gradient averaging]). Gradients may travel as bfloat16
/// or float16 and are averaged back in float32.
class GradientReducer {
 public:
  /// `wire_dtype`: at::kFloat, at::kBFloat16 or at::kHalf.
  GradientReducer(distributed::Communicator& comm, std::vector<at::Tensor> parameters,
                  double bucket_mb, at::ScalarType wire_dtype);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Zeroes every gradient in place. Use this, not Optimizer::zero_grad, which in LibTorch 2.x
  /// would replace the gradients by fresh tensors outside the buckets.
  void zero_grad();

  /// Call before each backward. `communicate`: this is the last backward before the optimizer
  /// step (earlier micro-batches of --grad-accum only accumulate, like DDP's no_sync).
  /// `stop_requested` rides along with the gradients (Note [Stop agreement]).
  void prepare_backward(bool communicate, bool stop_requested);

  /// After the last backward of a step: waits for every bucket and leaves the averaged
  /// gradients in place.
  void finish();

  /// After finish(): whether any rank asked to stop in this step. Reads a value from the training
  /// device, so on a GPU it waits for the step's work to finish.
  bool any_rank_stopping() const;

  size_t bucket_count() const { return buckets_.size(); }

  /// When one bucket's allreduce of the last step started and was seen done (timelines).
  struct CollectiveTiming {
    std::chrono::steady_clock::time_point launched;
    std::chrono::steady_clock::time_point done;
    std::int64_t bytes = 0;
  };
  /// The allreduces of the last communicating step, in launch order.
  const std::vector<CollectiveTiming>& last_collectives() const { return timings_; }

 private:
  struct Bucket {
    at::Tensor flat;  // float32 gradients back to back (plus the stop flag in the last bucket)
    at::Tensor wire;  // 16-bit copy sent instead of `flat` when compressing
    std::vector<size_t> parameters;
    size_t pending = 0;  // gradients still to arrive in this backward
    std::unique_ptr<distributed::PendingCollective> work;
    size_t timing = 0;  // its entry in timings_ for this step
  };

  void on_gradient_ready(size_t bucket);
  void launch(Bucket& bucket);
  /// Tests (or with `block`, waits for) a bucket in flight; records when it was seen done.
  void progress(Bucket& bucket, bool block);

  distributed::Communicator& comm_;
  std::vector<at::Tensor> parameters_;
  at::ScalarType wire_dtype_;
  std::vector<Bucket> buckets_;
  at::Tensor stop_flag_;  // the last element of the bucket launched last
  bool communicate_ = false;
  std::vector<CollectiveTiming> timings_;
  // The hooks live on the parameters' gradient accumulators: kept alive here and removed again
  // in the destructor, as the hooks point back at this object.
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, std::uintptr_t>> hooks_;
};

}  // namespace mnist_ddp::ddp
