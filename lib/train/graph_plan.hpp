// lib/train/graph_plan.hpp — provides: GraphPlan and plan_cuda_graph, whether --cuda-graph
// captures the training step of this run, and why not where it cannot.
#pragma once

#include <string>

#include "config/train_config.hpp"
#include "distributed/device_plan.hpp"

namespace mnist_ddp::train {

struct GraphPlan {
  bool capture = false;  // replay every full-batch step as one CUDA graph
  std::string reason;    // for the banner: what is captured, or why the steps run eagerly
};

/// Decides --cuda-graph from the agreed device plan: the same on every rank. A step can be
/// captured when it trains on CUDA in ddp mode, in fp32, one micro-batch per step, and its
/// collectives (if any) go through NCCL; `auto` runs eagerly elsewhere and says why, `on` is
/// refused there (UsageError, exit 2). See Note [The step as one CUDA graph] in graphed_step.cpp.
GraphPlan plan_cuda_graph(const config::TrainConfig& config, const distributed::DevicePlan& plan);

}  // namespace mnist_ddp::train
