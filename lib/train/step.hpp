// lib/train/step.hpp — provides: Step (eager or graphed), StepResult, PhaseClock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_meta.hpp"
#include "common/log.hpp"
#include "data/shard_cursor.hpp"
#include "ddp/gradient_reducer.hpp"
#include "ddp/model_replicas.hpp"
#include "distributed/device_plan.hpp"
#include "train/device_optimizer.hpp"
#include "train/graphed_step.hpp"
#include "train/lr_schedule.hpp"
#include "train/run_metrics.hpp"

namespace mnist_ddp::train {

/// Adds each phase's time to `times`, and reports it to `on_span` (if set) as a span of `step`.
class PhaseClock {
 public:
  PhaseClock(PhaseTimes& times, const std::function<void(const Span&)>& on_span, std::int64_t step)
      : times_(times), on_span_(on_span), step_(step) {}

  /// Ends `phase` now; the next phase starts.
  void lap(Phase phase) {
    const TraceClock::time_point now = TraceClock::now();
    times_[phase] += std::chrono::duration<double>(now - mark_).count();
    if (on_span_) on_span_(Span{phase_name(phase), mark_, now, step_});
    mark_ = now;
  }

 private:
  PhaseTimes& times_;
  const std::function<void(const Span&)>& on_span_;
  std::int64_t step_;
  TraceClock::time_point mark_ = TraceClock::now();
};

struct StepResult {
  std::int64_t images = 0;  // of this rank
  int micro_batches = 0;    // their losses went to the RunMetrics' sums
  double lr = 0;            // the learning rate it used
  PhaseTimes phases;
  bool graphed = false;  // replayed by the captured graph (its collectives are not timed)
};

/// The steps of an epoch's shard. Eager and graphed steps (Note [The step as one CUDA graph]) take
/// their rate and advance `progress` in one place, so a resume continues either exactly.
class Step {
 public:
  /// `total_steps`: the schedule's length; `shard_capacity`: the most indices of a shard.
  Step(const config::TrainConfig& config, const distributed::DevicePlan& plan,
       distributed::Communicator& comm, model::Classifier& model, const data::Dataset& train_set,
       torch::optim::Optimizer& optimizer, std::int64_t total_steps, std::int64_t shard_capacity,
       RunMetrics& metrics, checkpoint::TrainProgress& progress, const GraphPlan& graphs);

  /// Starts the epoch's `shard` (sample indices on the training device).
  void start_epoch(const at::Tensor& shard);
  std::int64_t samples_left() const { return shard_.size(0) - first_; }

  /// Trains the shard's next step.
  StepResult run(const TrainerHooks& hooks);
  /// Collective: whether and why the ranks agreed to stop after `step`, its wait timed in it
  /// (Note [The device's time in the phases]).
  ddp::StopReason stop_agreed(StepResult& step, bool device_read_follows,
                              const TrainerHooks& hooks);
  /// This rank's loss in the last step, read from the device.
  double last_loss() const { return last_loss_.item<double>(); }

  /// After a restore: the replicas take the new parameters.
  void parameters_replaced();
  std::int64_t allreduce_bytes() const { return reducer_.bytes_per_step(); }
  std::int64_t graph_nodes() const { return graphed_ ? graphed_->nodes() : 0; }
  /// Why the steps fell back from the captured graph to eager ones; "" where they did not.
  std::string graph_fallback() const { return graphed_ ? graphed_->fallback() : ""; }

 private:
  /// One of `micro_batches`; its allreduces start in its backward when `communicate`.
  void forward_backward(const at::Tensor& indices, int micro_batches, bool communicate,
                        PhaseClock& clock);
  /// Averages the gradients and applies the optimizer.
  void update(PhaseClock& clock);

  const config::TrainConfig& config_;
  c10::Device device_;
  int world_size_;
  Log log_;  // rank 0's
  model::Classifier& model_;
  RunMetrics& metrics_;
  checkpoint::TrainProgress& progress_;
  data::BatchMaker train_batches_;
  DeviceOptimizer device_optimizer_;  // Note [An optimizer step without host values]
  LrSchedule schedule_;
  ddp::GradientReducer reducer_;
  std::unique_ptr<ddp::ModelReplicas> replicas_;  // --mode dp only
  at::Tensor last_loss_;  // this rank's, of the last step (every replay writes the same tensor)
  at::Tensor shard_;
  std::int64_t first_ = 0;                     // the shard's next sample
  std::unique_ptr<data::ShardCursor> cursor_;  // `graphed` only: the shard on the device
  std::unique_ptr<GraphedStep> graphed_;
};

}  // namespace mnist_ddp::train
