// lib/distributed/device_plan.hpp — provides: RankPlacement, DevicePlan, decide_plan, plan_devices.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "config/device_request.hpp"
#include "distributed/rank_capability.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// One row of the layout table.
struct RankPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;     // "cpu", "cuda:1 (NVIDIA H100, 0000:18:00.0)"
  int threads = 1;        // intra-op threads
  int cores = 1;          // the cores its CPU binding lets it run on (usable_cores)
  std::string nccl_host;  // its NCCL_HOSTID, "" where unset
};

struct DevicePlan {
  c10::Device device = c10::Device(c10::kCPU);      // where this process's model and data live
  config::Backend backend = config::Backend::kMpi;  // kMpi or kNccl
  // More than one rank, or --communicate-alone.
  bool communicates = false;
  // --mode dp: every visible GPU, `device` first; one model replica on each. Empty in ddp mode.
  std::vector<c10::Device> replicas;
  std::vector<RankPlacement> layout;  // every rank's, in rank order
  // For the log: why the plan differs from this rank's own choice; "" when it does not.
  std::string note;
  bool on_cuda() const { return device.is_cuda(); }
};

// Note [One plan for every rank]. Device, transport and mode are decided from every rank's
// gathered capability, so all ranks decide alike; per-rank choices on unlike nodes would put some
// ranks in NCCL and others in MPI: a hang or mixed-up data. The autos fall back on every rank
// together; an explicit cuda or nccl not every rank can honour is refused everywhere, naming the
// ranks. NCCL needs a GPU per rank (told apart by node and PCI bus id). On CUDA the gradient
// hooks call MPI from the autograd thread, so MPI must provide MPI_THREAD_SERIALIZED.

/// Deterministic in `ranks` (in rank order): the same plan, or the same UsageError, on every rank.
DevicePlan decide_plan(const config::DeviceRequest& request,
                       const std::vector<RankCapability>& ranks, int rank);

/// Collective: probes, gathers and decides. Run it inside run_agreed.
DevicePlan plan_devices(const config::DeviceRequest& request, const World& world);

}  // namespace mnist_ddp::distributed
