// lib/distributed/device_plan.hpp — provides: DevicePlan and plan_devices, which turn --device,
// --backend and --mode into the devices this process trains on and the gradient transport,
// refusing (UsageError, exit 2) what this build or machine cannot do.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "config/train_config.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

struct DevicePlan {
  c10::Device device = c10::Device(c10::kCPU);  // where this process's model and data live
  std::string backend;                          // "mpi" or "nccl"
  // --mode dp: every visible GPU, `device` first; one model replica on each. Empty in ddp mode.
  std::vector<c10::Device> replicas;
  std::string device_text;  // for the layout table: "cpu", "cuda:1 (NVIDIA H100, 0000:18:00.0)"
  bool on_cuda() const { return device.is_cuda(); }
};

/// Why this process cannot use CUDA ("this LibTorch 1.13.1 was built without CUDA", "no CUDA
/// device is visible ..."), or "" when it can.
std::string cuda_unavailable_reason();

/// This rank's plan. --device auto picks cuda when cuda_unavailable_reason() is empty; on cuda
/// a ddp rank uses GPU local rank % visible GPUs. --backend auto picks nccl on cuda when the build
/// has it and every rank of the node has a GPU of its own, else mpi. Throws UsageError for cuda,
/// nccl or dp where they cannot run, and for dp under more than one rank. Local: run it inside
/// run_agreed.
DevicePlan plan_devices(const config::TrainConfig& config, const World& world);

}  // namespace mnist_ddp::distributed
