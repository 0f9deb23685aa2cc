// lib/distributed/device_plan.hpp — provides: DevicePlan, decide_plan and plan_devices, which turn
// --device, --backend and --mode into the devices this process trains on and the gradient
// transport: one plan that every rank agrees on, refusing (UsageError, exit 2) what not every
// rank can do.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "config/train_config.hpp"
#include "distributed/rank_capability.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

struct DevicePlan {
  c10::Device device = c10::Device(c10::kCPU);      // where this process's model and data live
  config::Backend backend = config::Backend::kMpi;  // kMpi or kNccl
  // Whether the ranks exchange gradients and parameters: more than one, or --communicate-alone.
  bool communicates = false;
  // --mode dp: every visible GPU, `device` first; one model replica on each. Empty in ddp mode.
  std::vector<c10::Device> replicas;
  std::string device_text;  // for the layout table: "cpu", "cuda:1 (NVIDIA H100, 0000:18:00.0)"
  // Why the plan is not what this rank alone would have chosen ("--device auto: the CPU on
  // every rank, as rank 3 ..."), for the log; "" when it is.
  std::string note;
  bool on_cuda() const { return device.is_cuda(); }
};

// Note [One plan for every rank]. Every decision that shapes the collectives (the device, the
// transport, the mode) is taken once from what every rank can do, gathered beforehand, so every
// rank takes the same one. Decided per rank, nodes that differ (8 ranks on a 4-GPU node beside 4
// on another, a node whose driver is broken) would give a job in which some ranks join NCCL while
// others wait in MPI: a hang or mixed-up data. --device auto and --backend auto fall back for
// every rank together, and the note names the ranks that forced it; an explicit --device cuda or
// --backend nccl that not every rank can honour is refused on every rank, naming them. NCCL needs
// a GPU of its own per rank, told apart by node and PCI bus id: under `srun --gpus-per-task=1`
// each task sees one GPU, a different one, and NCCL is right there. On CUDA the gradient hooks call
// the communicator from LibTorch's autograd thread, so the MPI library must provide
// MPI_THREAD_SERIALIZED.

/// The plan of rank `rank` from every rank's capability (in rank order). Deterministic: every
/// rank that is given the same `ranks` decides the same device type, transport and mode, and
/// throws the same UsageError for cuda, nccl or dp where not every rank can run them, and for
/// dp under more than one rank.
DevicePlan decide_plan(const config::TrainConfig& config, const std::vector<RankCapability>& ranks,
                       int rank);

/// Collective: probes this rank, gathers every rank's capability and decides. Run it inside
/// run_agreed.
DevicePlan plan_devices(const config::TrainConfig& config, const World& world);

}  // namespace mnist_ddp::distributed
