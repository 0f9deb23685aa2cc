// lib/train/graph_plan.hpp — provides: GraphPlan, plan_cuda_graph (--cuda-graph's decision).
#pragma once

#include <functional>
#include <string>

#include "config/train_config.hpp"
#include "distributed/device_plan.hpp"

namespace mnist_ddp::train {

struct GraphPlan {
  bool capture = false;  // replay every full-batch step as one CUDA graph
  std::string reason;    // for the banner: what is captured, or why the steps run eagerly
  std::function<void()> after_replay = [] {};  // the session's (distributed::Session)
};

/// From the agreed plan, so the same on every rank: capture needs CUDA, ddp, fp32, no grad-accum,
/// NCCL. Elsewhere `auto` runs eagerly, `on` throws UsageError (exit 2). Note [The step as one
/// CUDA graph] in graphed_step.cpp.
GraphPlan plan_cuda_graph(const config::TrainConfig& config, const distributed::DevicePlan& plan);

}  // namespace mnist_ddp::train
