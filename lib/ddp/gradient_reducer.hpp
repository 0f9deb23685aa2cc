// lib/ddp/gradient_reducer.hpp — provides: GradientReducer, which averages gradients across
// ranks in buckets that start communicating, in bucket order, while backward is still running.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::ddp {

/// Note [Bucketed gradient reduction]. Parameters are grouped into buckets in reverse
/// registration order (the order backward produces their gradients), each at most `bucket_mb`
/// MB on the wire (a larger parameter gets a bucket of its own). Every gradient is a view into its
/// bucket's flat buffer, so nothing is copied in or out per step. An autograd hook on each
/// parameter's gradient accumulator counts the bucket down; once its last gradient has arrived
/// the bucket is ready, and ready buckets start their allreduce (asynchronously) strictly in
/// bucket order (Note [Bucket launch order] in gradient_reducer.cpp, which also covers
/// parameters without a gradient). finish() waits for all of them. In float32 the communicator
/// averages, dividing once the sum is complete (Note [Gradient averaging]). Gradients may travel
/// as bfloat16 or float16 instead, like PyTorch's fp16_compress_hook: each rank writes its
/// gradients divided by the world size into the 16-bit buffer (computed in float32, rounded
/// once), the allreduce sums those, and the sum is copied back as it is. Dividing first keeps
/// every partial sum within the range of a single rank's gradients: summing first would
/// overflow float16 (largest value 65,504) at 3 ranks with gradients of 30,000.
class GradientReducer {
 public:
  /// `wire_dtype`: at::kFloat, at::kBFloat16 or at::kHalf. `communicates`: whether the buckets
  /// are allreduced at all (DevicePlan::communicates); without it the gradients stay this rank's.
  GradientReducer(distributed::Communicator& comm, std::vector<at::Tensor> parameters,
                  double bucket_mb, at::ScalarType wire_dtype, bool communicates);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Zeroes every gradient in place (not the stop flag). Use this, not Optimizer::zero_grad,
  /// which in LibTorch 2.x would replace the gradients by fresh tensors outside the buckets.
  void zero_grad();

  /// Whether this rank asks to stop; rides along with the next communicating step's gradients
  /// (Note [Stop agreement]). Call it before each communicating backward: it writes the flag
  /// behind the last bucket's gradients, outside a captured step (Note [The step as one CUDA
  /// graph]), so each replay carries the request of its own step, at no kernel of the graph's.
  void request_stop(bool stop_requested);

  /// Call before each backward. `communicate`: this is the last backward before the optimizer
  /// step (earlier micro-batches of --grad-accum only accumulate, like DDP's no_sync).
  void prepare_backward(bool communicate);

  /// After the last backward of a step: launches the buckets still waiting (in bucket order),
  /// waits for every bucket and leaves the averaged gradients in place.
  void finish();

  /// After finish(): whether any rank asked to stop in this step. Reads a value from the training
  /// device, so on a GPU it waits for the step's work to finish.
  bool any_rank_stopping() const;

  size_t bucket_count() const { return buckets_.size(); }

  /// Bytes this rank hands to the allreduces of one communicating step: every bucket in the
  /// dtype it travels in, the stop flag included.
  std::int64_t bytes_per_step() const;

  /// Parameters that got no gradient on this rank in any backward of the last communicating step
  /// (they contributed zeros; Note [Bucket launch order]).
  std::size_t last_unused_parameters() const { return last_unused_; }

  /// When one bucket's allreduce of the last step started and was seen done (timelines). Host
  /// time: over NCCL "done" is when wait() handed the collective to the stream (Note [NCCL
  /// watchdog]), not when the GPU finished it, so there these spans measure launch overhead only.
  struct CollectiveTiming {
    std::chrono::steady_clock::time_point launched;
    std::chrono::steady_clock::time_point done;
    std::int64_t bytes = 0;
  };
  /// The allreduces of the last communicating step, in launch order (which is bucket order).
  const std::vector<CollectiveTiming>& last_collectives() const { return timings_; }

 private:
  struct Bucket {
    at::Tensor flat;       // float32 gradients back to back (plus the stop flag in the last one)
    at::Tensor gradients;  // `flat` without the stop flag: what zero_grad() clears
    at::Tensor wire;       // 16-bit buffer sent instead of `flat` when compressing
    std::vector<size_t> parameters;
    size_t pending = 0;  // gradients still to arrive in this backward; 0: ready
    std::unique_ptr<distributed::PendingCollective> work;
    size_t timing = 0;  // its entry in timings_ for this step
  };

  void on_gradient_ready(size_t bucket, size_t parameter);
  /// Launches buckets_[next_to_launch_] and the ones after it while they are ready.
  void launch_ready_buckets();
  void launch(Bucket& bucket);
  /// Tests (or with `block`, waits for) a bucket in flight; records when it was seen done.
  void progress(Bucket& bucket, bool block);

  distributed::Communicator& comm_;
  std::vector<at::Tensor> parameters_;
  at::ScalarType wire_dtype_;
  bool communicates_;
  std::vector<Bucket> buckets_;
  at::Tensor stop_flag_;  // the last element of the last bucket, after its gradients
  bool communicate_ = false;
  size_t next_to_launch_ = 0;  // buckets before it have been launched in this backward
  // Per parameter: whether it got a gradient in a backward since the last finish().
  std::vector<bool> got_gradient_;
  std::size_t last_unused_ = 0;
  std::vector<CollectiveTiming> timings_;
  // The hooks live on the parameters' gradient accumulators and point back at this object: each
  // of these removes one (keeping its accumulator alive until then), run by the destructor.
  std::vector<std::function<void()>> remove_hooks_;
};

}  // namespace mnist_ddp::ddp
