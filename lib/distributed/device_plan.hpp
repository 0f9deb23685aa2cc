// lib/distributed/device_plan.hpp — provides: RankCapability (rank_capability.cpp), DevicePlan.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "config/device_request.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

struct RankCapability {
  int node = 0;  // World::node_id(): ranks of one node share it
  int local_rank = 0;
  std::string host;
  std::string cuda_missing;  // why this rank cannot use CUDA; "" when it can
  int visible_gpus = 0;
  int gpu = -1;             // the GPU it would train on: local rank % visible GPUs; -1 on the CPU
  std::string gpu_text;     // "cuda:1 (NVIDIA H100, 0000:18:00.0)"
  std::string gpu_bus_id;   // "0000:18:00.0", or "" where the CUDA runtime is not linked in
  bool nccl_built = false;  // this rank's binary has the NCCL backend
  int thread_level = 0;     // what MPI_Init_thread provided
  std::string nccl_host;    // NCCL_HOSTID where set: NCCL then takes it for the host, not the node
  bool nccl_shares_gpus = false;  // its NCCL lets ranks of one host share a GPU
  int threads = 1;                // intra-op: --threads, else the node's cores shared by its ranks
  int cores = 1;                  // usable_cores()
};

/// The cores this process's CPU affinity mask allows, else every core of the machine.
int usable_cores();

/// This process's NCCL_HOSTID, or "" where it is unset (Note [Several NCCL ranks on one GPU]).
std::string nccl_host_id();

/// Whether NCCL lets ranks of one host share a GPU: NCCL_MULTI_RANK_GPU_ENABLE is "1" (`enable`,
/// null where unset) and the loaded NCCL (`nccl_version`, 22809 for 2.28.9; 0: none) is 2.30+.
bool nccl_allows_shared_gpus(const char* enable, int nccl_version);
/// nccl_allows_shared_gpus for this process's environment and NCCL.
bool nccl_shares_gpus();

/// Never throws for what the machine lacks (cuda_missing says it); --device cpu never touches CUDA.
RankCapability probe_capability(const World& world, const config::DeviceRequest& request);

/// Collective: every rank's capability, in rank order.
std::vector<RankCapability> gather_capabilities(const World& world, const RankCapability& mine);

/// "ranks 0 and 2 would share cuda:0 (...) on gpu07: ...", the first two ranks on one GPU of one
/// host as NCCL sees them (Note [Several NCCL ranks on one GPU]), or "" when no two are.
std::string shared_gpu_reason(const std::vector<RankCapability>& ranks);

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
  bool communicates = false;                        // more than one rank, or --communicate-alone
  // --mode dp: every visible GPU, `device` first; one model replica on each. Empty in ddp mode.
  std::vector<c10::Device> replicas;
  std::vector<RankPlacement> layout;  // every rank's, in rank order
  std::string note;  // for the log: why the plan differs from this rank's own choice, or ""
  bool on_cuda() const { return device.is_cuda(); }
};

// Note [One plan for every rank]. Device, transport and mode are decided from every rank's
// gathered capability, so all ranks decide alike (per-rank choices on unlike nodes would mix NCCL
// and MPI: a hang). The autos fall back on every rank together; an explicit cuda or nccl not every
// rank can honour is refused everywhere, naming the ranks.

/// Deterministic in `ranks` (in rank order): the same plan, or the same UsageError, on every rank.
DevicePlan decide_plan(const config::DeviceRequest& request,
                       const std::vector<RankCapability>& ranks, int rank);

/// Collective: probes, gathers and decides. Run it inside run_agreed.
DevicePlan plan_devices(const config::DeviceRequest& request, const World& world);

}  // namespace mnist_ddp::distributed
