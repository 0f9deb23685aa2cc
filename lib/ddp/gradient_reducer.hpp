// lib/ddp/gradient_reducer.hpp — provides: GradientReducer, broadcast_parameters.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::ddp {

/// Copies rank 0's parameters and buffers to every rank; a no-op unless `communicate`.
void broadcast_parameters(distributed::Communicator& comm, torch::nn::Module& module,
                          bool communicate);

/// Why the ranks stop after a step.
enum class StopReason { kNone, kRequested, kNotFinite };

/// Note [Bucketed gradient reduction]: each gradient is a view into its bucket (no copy per step);
/// float32 is averaged by the communicator (Note [Gradient averaging]); 16-bit wires, like
/// fp16_compress_hook, divide by the world size before the sum, which could overflow float16.
class GradientReducer {
 public:
  /// `wire_dtype`: kFloat, kBFloat16 or kHalf. Without `communicates` gradients stay this rank's.
  GradientReducer(distributed::Communicator& comm, const std::vector<at::Tensor>& parameters,
                  double bucket_mb, at::ScalarType wire_dtype, bool communicates);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Zeroes the gradients in place, not the stop flag (LibTorch 2.x's zero_grad replaces them).
  void zero_grad();

  /// Rides this rank's stop request on the next step's gradients (Note [Stop agreement]), outside
  /// a capture (Note [The step as one CUDA graph]).
  void request_stop(bool stop_requested);
  /// Before the step's backward: raises the stop flag, without a wait, when `loss` is not finite.
  void stop_if_not_finite(const at::Tensor& loss);

  /// Before each backward; `communicate` on the last one of the step (others act like no_sync).
  void prepare_backward(bool communicate);

  /// After the step's last backward: launches the buckets held back, waits for all of them.
  void finish();

  /// After finish(): why ranks stop after this step, if any does. Synchronizes with the device.
  StopReason any_rank_stopping() const;

  size_t bucket_count() const { return buckets_.size(); }

  /// Bytes allreduced per communicating step, in the wire dtype, stop flag included.
  std::int64_t bytes_per_step() const;

  /// Parameters without a gradient in the last communicating step (Note [Bucket launch order]).
  std::size_t last_unused_parameters() const { return last_unused_; }

  /// One bucket's allreduce in host time; over NCCL only launch overhead (Note [NCCL watchdog]).
  struct CollectiveTiming {
    std::chrono::steady_clock::time_point launched;
    std::chrono::steady_clock::time_point done;
    std::int64_t bytes = 0;
  };
  /// The allreduces of the last communicating step, in bucket order.
  const std::vector<CollectiveTiming>& last_collectives() const { return timings_; }

 private:
  struct Bucket {
    at::Tensor flat;       // float32 gradients back to back (plus the stop flag in the last one)
    at::Tensor gradients;  // `flat` without the stop flag: what zero_grad() clears
    at::Tensor wire;       // 16-bit buffer sent instead of `flat` when compressing
    const at::Tensor& sent() const { return wire.defined() ? wire : flat; }
    std::vector<size_t> parameters;
    size_t pending = 0;  // gradients still to arrive in this backward; 0: ready
    std::unique_ptr<distributed::PendingCollective> work;
    size_t timing = 0;  // its entry in timings_ for this step
  };

  void on_gradient_ready(size_t bucket, size_t parameter);
  void launch(Bucket& bucket);
  /// Tests (or with `block`, waits for) a bucket in flight; records when it was seen done.
  void progress(Bucket& bucket, bool block);

  distributed::Communicator& comm_;
  bool communicates_;
  std::vector<Bucket> buckets_;
  at::Tensor stop_flag_;  // the last element of the last bucket, after its gradients
  bool communicate_ = false;
  size_t next_to_launch_ = 0;       // buckets before it have been launched in this backward
  std::vector<bool> got_gradient_;  // per parameter: got a gradient since the last finish()
  std::size_t last_unused_ = 0;
  std::vector<CollectiveTiming> timings_;
  // The hooks point back at this object: the destructor removes each.
  std::vector<std::function<void()>> remove_hooks_;
};

}  // namespace mnist_ddp::ddp
