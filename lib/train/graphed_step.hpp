// lib/train/graphed_step.hpp — provides: GraphPlan, plan_cuda_graph, TrainingStream, GraphedStep.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "config/train_config.hpp"
#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"

namespace mnist_ddp::train {

struct GraphPlan {
  bool capture = false;  // replay every full-batch step as one CUDA graph
  std::string reason;    // for the banner: what is captured, or why the steps run eagerly
  std::function<void()> after_replay = [] {};  // the session's (distributed::Session)
};

/// From the agreed plan, so the same on every rank: capture needs CUDA, ddp, fp32, no grad-accum,
/// NCCL. Elsewhere `auto` runs eagerly, `on` throws UsageError (exit 2).
GraphPlan plan_cuda_graph(const config::TrainConfig& config, const distributed::DevicePlan& plan);

/// Whether this build captures CUDA graphs (LibTorch 2.x with CUDA, not MNIST_DDP_CUDA_GRAPHS=OFF).
bool cuda_graphs_built();

/// Note [One stream for a captured training]: while it lives (with `captured_steps` on CUDA, in a
/// build that captures) `device`'s current stream is a side stream. Make it before the
/// GradientReducer and the step's tensors; like a stream guard, the one made last ends first.
class TrainingStream {
 public:
  TrainingStream(c10::Device device, bool captured_steps);
  ~TrainingStream();
  TrainingStream(const TrainingStream&) = delete;
  TrainingStream& operator=(const TrainingStream&) = delete;

 private:
  struct Switch;  // the streams, where CUDA graphs are built in

  std::unique_ptr<Switch> switch_;  // null: nothing was switched
};

/// Note [The step as one CUDA graph] in graphed_step.cpp.
class GraphedStep {
 public:
  /// `body`: one step's device work, reading what changes per step from tensors only. After
  /// `warmup_steps` eager runs it is captured (on CUDA, collectives on `comm` too) and replayed,
  /// each replay followed by `after_replay`. `required` (--cuda-graph on): a failed capture ends
  /// the run rather than falling back.
  GraphedStep(
      std::function<void()> body, c10::Device device, distributed::Communicator& comm,
      int warmup_steps, bool required, std::function<void()> after_replay = [] {});
  ~GraphedStep();
  GraphedStep(const GraphedStep&) = delete;
  GraphedStep& operator=(const GraphedStep&) = delete;

  /// One step, launched; `in_capture` runs inside the capture (fault injection). False, having
  /// trained nothing, when the capture failed (Note [A failed capture]): train eagerly from here.
  bool run(const std::function<void()>& in_capture);

  /// Whether runs replay a captured CUDA graph now.
  bool replaying() const;
  /// Why the capture was given up ("rank 1: ..."); "" while it holds or has yet to be made.
  const std::string& fallback() const { return fallback_; }
  /// The captured graph's nodes (what a replay launches); 0 without one or where CUDA cannot tell.
  std::int64_t nodes() const;

 private:
  struct Capture;  // the graph, where CUDA graphs are built in

  static std::unique_ptr<Capture> make_capture(c10::Device device,
                                               std::function<void()> after_replay);
  /// Captures `body_` on this rank: "" when it worked, else why not.
  std::string capture(const std::function<void()>& in_capture);

  std::function<void()> body_;
  distributed::Communicator& comm_;
  int warmups_left_;
  bool required_;
  bool captured_ = false;
  std::string fallback_;
  std::unique_ptr<Capture> capture_;  // null: nothing to capture (CPU or no CUDA graphs)
};

}  // namespace mnist_ddp::train
