// lib/distributed/device_plan.cpp — device, backend and replicas from options and capabilities.
#include "distributed/device_plan.hpp"

#include <mpi.h>

#include <set>

#include "common/error.hpp"

namespace mnist_ddp::distributed {
namespace {

/// "rank 3 (gpu07)", "ranks 4, 5, 6, 7 (gpu02)", "ranks 0, 1, ... and 12 more (a, b)".
std::string name_ranks(const std::vector<int>& which, const std::vector<RankCapability>& ranks) {
  constexpr size_t kListed = 8;
  std::string text = which.size() == 1 ? "rank " : "ranks ";
  std::set<std::string> hosts;
  for (size_t i = 0; i < which.size(); ++i) {
    hosts.insert(ranks[which[i]].host);
    if (i < kListed) text += (i > 0 ? ", " : "") + std::to_string(which[i]);
  }
  if (which.size() > kListed) text += " and " + std::to_string(which.size() - kListed) + " more";
  std::string host_list;
  for (const std::string& host : hosts) host_list += (host_list.empty() ? "" : ", ") + host;
  return text + " (" + host_list + ")";
}

template <typename Lacks>
std::vector<int> ranks_where(const std::vector<RankCapability>& ranks, Lacks lacks) {
  std::vector<int> which;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (lacks(ranks[r])) which.push_back(static_cast<int>(r));
  }
  return which;
}

/// Why NCCL cannot carry this job's gradients, or "" when it can.
std::string nccl_unavailable_reason(const std::vector<RankCapability>& ranks) {
  const std::vector<int> without =
      ranks_where(ranks, [](const RankCapability& r) { return !r.nccl_built; });
  if (!without.empty()) {
    return "the mnist_ddp of " + name_ranks(without, ranks) +
           " has no NCCL backend (configure with the CUDA toolkit and NCCL, "
           "-DMNIST_DDP_NCCL=ON)";
  }
  return shared_gpu_reason(ranks);
}

/// The plan but its layout.
DevicePlan choose_devices(const config::DeviceRequest& request,
                          const std::vector<RankCapability>& ranks, int rank) {
  const bool dp = request.mode == config::Mode::kDp;
  const int world_size = static_cast<int>(ranks.size());
  DevicePlan plan;
  plan.communicates = world_size > 1 || request.communicate_alone;
  if (request.device == config::Device::kCpu) return plan;

  const std::vector<int> without_cuda =
      ranks_where(ranks, [](const RankCapability& r) { return !r.cuda_missing.empty(); });
  const bool wants_cuda =
      request.device == config::Device::kCuda || request.backend == config::Backend::kNccl || dp;
  if (!without_cuda.empty()) {
    const std::string why = ranks[without_cuda.front()].cuda_missing;
    if (wants_cuda) {
      const std::string what = dp ? "--mode dp drives GPUs and needs CUDA"
                               : request.device == config::Device::kCuda
                                   ? "--device cuda"
                                   : "--backend nccl needs a CUDA device";
      throw UsageError(
          what + ": " + (world_size > 1 ? name_ranks(without_cuda, ranks) + ": " : "") + why +
          (dp ? ". Without GPUs train data-parallel over MPI: mpirun -np N mnist_ddp" : ""));
    }
    if (static_cast<int>(without_cuda.size()) < world_size) {
      plan.note = "--device auto: the CPU on every rank, as " + name_ranks(without_cuda, ranks) +
                  " cannot use CUDA (" + why + ")";
    }
    return plan;
  }
  if (dp && world_size > 1) {
    throw UsageError("--mode dp runs as one process that drives every visible GPU, but " +
                     std::to_string(world_size) +
                     " ranks were started: run it without mpirun (or with -np 1), or use "
                     "--mode ddp for one rank per GPU");
  }

  const std::vector<int> serial_mpi = ranks_where(
      ranks, [](const RankCapability& r) { return r.thread_level < MPI_THREAD_SERIALIZED; });
  if (!serial_mpi.empty()) {
    throw CommError(
        "training on CUDA calls MPI from LibTorch's autograd thread, which needs "
        "MPI_THREAD_SERIALIZED, but the MPI library of " +
        name_ranks(serial_mpi, ranks) +
        " provides less: use an MPI built with thread support, or --device cpu");
  }

  const RankCapability& mine = ranks[rank];
  plan.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(mine.gpu));
  if (dp) {
    for (int d = 0; d < mine.visible_gpus; ++d) {
      plan.replicas.emplace_back(c10::kCUDA, static_cast<c10::DeviceIndex>(d));
    }
    return plan;  // one process: nothing travels between ranks
  }
  const std::string no_nccl = nccl_unavailable_reason(ranks);
  if (request.backend == config::Backend::kNccl && !no_nccl.empty()) {
    throw UsageError("--backend nccl: " + no_nccl);
  }
  if (request.backend != config::Backend::kMpi && no_nccl.empty()) {
    plan.backend = config::Backend::kNccl;
  } else if (request.backend == config::Backend::kAuto && ranks.front().nccl_built) {
    plan.note = "--backend auto: MPI through host memory, as " + no_nccl;
  }
  return plan;
}

}  // namespace

DevicePlan decide_plan(const config::DeviceRequest& request,
                       const std::vector<RankCapability>& ranks, int rank) {
  DevicePlan plan = choose_devices(request, ranks, rank);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankCapability& c = ranks[r];
    std::string device = plan.on_cuda() ? c.gpu_text : "cpu";
    if (!plan.replicas.empty() && c.visible_gpus > 1) {
      device += " + " + std::to_string(c.visible_gpus - 1) + " more GPU(s)";
    }
    plan.layout.push_back(
        {static_cast<int>(r), c.host, c.local_rank, device, c.threads, c.cores, c.nccl_host});
  }
  return plan;
}

DevicePlan plan_devices(const config::DeviceRequest& request, const World& world) {
  const RankCapability mine = probe_capability(world, request);
  return decide_plan(request, gather_capabilities(world, mine), world.rank());
}

}  // namespace mnist_ddp::distributed
