// lib/train/graphed_step.hpp — provides: TrainingStream, the side stream a training whose steps are
// captured runs on, and GraphedStep, which runs a training step's device work eagerly for a few
// warm-up steps, then captures it as one CUDA graph and replays that.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "distributed/communicator.hpp"

namespace mnist_ddp::train {

/// Whether this build can capture CUDA graphs: its LibTorch is 2.x with CUDA and it was not
/// configured with MNIST_DDP_CUDA_GRAPHS=OFF. Where it cannot, GraphedStep runs every step eagerly.
bool cuda_graphs_built();

/// Note [One stream for a captured training] in graphed_step.cpp. While it lives, with
/// `captured_steps` on a CUDA `device` in a build that captures, this thread's work on `device`
/// runs on a side stream, ordered after the work launched before (the communicator's collectives
/// too, as they follow the current stream); at its end the previous stream waits for the side
/// stream's work and becomes current again. Elsewhere it does nothing. Construct it before
/// anything that registers gradient hooks (GradientReducer) or makes a tensor the steps use; like
/// a stream guard, of two the one made last must end first.
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
  /// `body`: the device work of one step, reading whatever changes from step to step from
  /// tensors (the batch's position, the learning rate, the stop request), never from host
  /// values. The first `warmup_steps` runs are eager, the next one captures `body` (on CUDA, in a
  /// build that captures; its collectives on `comm` too) and every run replays the capture.
  /// `required` (--cuda-graph on): a failed capture ends the run instead of falling back. Runs on
  /// the thread's current stream, which on CUDA must be a TrainingStream's.
  GraphedStep(std::function<void()> body, c10::Device device, distributed::Communicator& comm,
              int warmup_steps, bool required);
  ~GraphedStep();
  GraphedStep(const GraphedStep&) = delete;
  GraphedStep& operator=(const GraphedStep&) = delete;

  /// One step: eager, captured then replayed, or replayed; returns once the host has launched
  /// it. `in_capture` (if set) runs inside the capture (fault injection). Returns false, having
  /// trained nothing, when the capture failed on some rank (Note [A failed capture]): the caller
  /// trains this step and every later one eagerly.
  bool run(const std::function<void()>& in_capture);

  /// Whether runs replay a captured CUDA graph now.
  bool replaying() const;
  /// Why the capture was given up ("rank 1: ..."); "" while it holds or has yet to be made.
  const std::string& fallback() const { return fallback_; }
  /// The nodes (kernels, copies, ...) of the captured graph: what one replay launches; 0 before
  /// a capture, or where CUDA could not count them.
  std::int64_t nodes() const;

 private:
  struct Capture;  // the graph, where CUDA graphs are built in

  /// Captures `body_` on this rank: "" when it worked, else why not.
  std::string capture(const std::function<void()>& in_capture);
  /// Drops what capture() made.
  void release();
  void replay();

  std::function<void()> body_;
  distributed::Communicator& comm_;
  int warmups_left_;
  bool required_;
  bool captured_ = false;
  std::string fallback_;
  std::unique_ptr<Capture> capture_;  // null: nothing to capture (CPU or no CUDA graphs)
};

}  // namespace mnist_ddp::train
