// lib/distributed/rank_capability.cpp — probing CUDA and NCCL on one rank; one MPI_Allgather of
// fixed-size records.
#include "distributed/rank_capability.hpp"

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "distributed/make_communicator.hpp"
#include "distributed/mpi_check.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#endif

namespace mnist_ddp::distributed {

// Note [Several NCCL ranks on one GPU]
// NCCL refuses two ranks on one GPU only when it takes them for ranks of one host, and its host
// is a hash of NCCL_HOSTID where that is set (src/misc/utils.cc, getHostHashOnce). Ranks with
// distinct NCCL_HOSTIDs are then separate hosts to NCCL, each with a GPU of its own, even on one
// GPU: tests run a real N-rank communicator that way. The placement check follows the same rule.
std::string nccl_host_id() {
  const char* id = std::getenv("NCCL_HOSTID");
  return id != nullptr ? id : "";
}

std::string cuda_unavailable_reason() {
  if (!at::hasCUDA()) {
    return "this LibTorch (" TORCH_VERSION
           ") was built without CUDA; build mnist_ddp against a CUDA LibTorch (tests/gpu/run.sh "
           "shows how)";
  }
  if (torch::cuda::device_count() > 0) return "";
  std::string reason = "no CUDA device is visible to this process";
#if MNIST_DDP_HAVE_NCCL
  try {
    cuda_device_count();  // throws with the CUDA runtime's own reason
  } catch (const std::exception& e) {
    reason += " (" + std::string(e.what()) + ")";
  }
#endif
  return reason + "; check nvidia-smi and CUDA_VISIBLE_DEVICES";
}

namespace {

using Text = std::array<char, 200>;

/// Fixed-size and trivially copyable, so it travels as bytes.
struct Record {
  int node = 0;
  int local_rank = 0;
  int visible_gpus = 0;
  int gpu = -1;
  int nccl_built = 0;
  int thread_level = 0;
  int threads = 1;
  int cores = 1;
  Text host{};
  Text cuda_missing{};
  Text gpu_text{};
  Text gpu_bus_id{};
  Text nccl_host{};
};

void put(Text& into, const std::string& text) {
  std::strncpy(into.data(), text.c_str(), into.size() - 1);
}

}  // namespace

int usable_cores() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return CPU_COUNT(&mask);
  return static_cast<int>(std::thread::hardware_concurrency());
}

RankCapability probe_capability(const World& world, const config::TrainConfig& config) {
  RankCapability mine;
  mine.node = world.node_id();
  mine.local_rank = world.local_rank();
  mine.host = world.host();
  mine.nccl_built = nccl_built_in();
  mine.thread_level = world.thread_level();
  mine.nccl_host = nccl_host_id();
  const int node_cores = static_cast<int>(std::thread::hardware_concurrency());
  mine.threads = config.threads > 0 ? config.threads : std::max(1, node_cores / world.local_size());
  mine.cores = usable_cores();
  if (config.device == config::Device::kCpu) {
    mine.cuda_missing = "--device cpu";
    return mine;
  }
  mine.cuda_missing = cuda_unavailable_reason();
  if (!mine.cuda_missing.empty()) return mine;
  // One count decides both the training device and the NCCL device (the plan hands it on).
  mine.visible_gpus = static_cast<int>(torch::cuda::device_count());
  mine.gpu = mine.local_rank % mine.visible_gpus;
  mine.gpu_text = "cuda:" + std::to_string(mine.gpu);
#if MNIST_DDP_HAVE_NCCL
  try {
    const CudaDevice device = cuda_device(mine.gpu);
    mine.gpu_text = device.describe();
    mine.gpu_bus_id = device.pci_bus_id;
  } catch (const std::exception& e) {
    mine.cuda_missing = e.what();
  }
#endif
  return mine;
}

std::vector<RankCapability> gather_capabilities(const World& world, const RankCapability& mine) {
  Record record;
  record.node = mine.node;
  record.local_rank = mine.local_rank;
  record.visible_gpus = mine.visible_gpus;
  record.gpu = mine.gpu;
  record.nccl_built = mine.nccl_built ? 1 : 0;
  record.thread_level = mine.thread_level;
  record.threads = mine.threads;
  record.cores = mine.cores;
  put(record.host, mine.host);
  put(record.cuda_missing, mine.cuda_missing);
  put(record.gpu_text, mine.gpu_text);
  put(record.gpu_bus_id, mine.gpu_bus_id);
  put(record.nccl_host, mine.nccl_host);

  std::vector<Record> records(world.size());
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallgather(&record, sizeof record, MPI_BYTE, records.data(), sizeof record,
                                MPI_BYTE, world.comm(), &request));
  world.wait(request, "gathering every rank's devices");
  std::vector<RankCapability> all;
  for (const Record& r : records) {
    all.push_back({r.node, r.local_rank, r.host.data(), r.cuda_missing.data(), r.visible_gpus,
                   r.gpu, r.gpu_text.data(), r.gpu_bus_id.data(), r.nccl_built != 0, r.thread_level,
                   r.nccl_host.data(), r.threads, r.cores});
  }
  return all;
}

std::string shared_gpu_reason(const std::vector<RankCapability>& ranks) {
  const auto same_gpu = [](const RankCapability& a, const RankCapability& b) {
    const bool same_host =
        a.nccl_host.empty() && b.nccl_host.empty() ? a.node == b.node : a.nccl_host == b.nccl_host;
    if (a.gpu < 0 || b.gpu < 0 || !same_host) return false;
    return a.gpu_bus_id.empty() || b.gpu_bus_id.empty() ? a.gpu == b.gpu
                                                        : a.gpu_bus_id == b.gpu_bus_id;
  };
  for (size_t a = 0; a < ranks.size(); ++a) {
    for (size_t b = a + 1; b < ranks.size(); ++b) {
      if (!same_gpu(ranks[a], ranks[b])) continue;
      return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " would share " +
             ranks[a].gpu_text + " on " + ranks[a].host +
             ": NCCL needs a GPU of its own for each rank (start no more ranks per node than it "
             "has GPUs)";
    }
  }
  return "";
}

}  // namespace mnist_ddp::distributed
