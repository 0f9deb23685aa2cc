// lib/distributed/rank_capability.cpp — probing one rank; one MPI_Allgather of fixed-size records.
#include "distributed/device_plan.hpp"

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

#include "distributed/mpi_watchdog.hpp"
#include "distributed/session.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "distributed/cuda_devices.hpp"
#include "distributed/gpu_libraries.hpp"
#endif

namespace mnist_ddp::distributed {

// Note [Several NCCL ranks on one GPU]
// NCCL refuses two ranks on one GPU only when it takes them for ranks of one host, a hash of
// NCCL_HOSTID where that is set: ranks with distinct NCCL_HOSTIDs may share a GPU (tests run a real
// N-rank communicator so). NCCL 2.30+ with NCCL_MULTI_RANK_GPU_ENABLE=1 lets ranks of one host
// share a GPU too. The placement check follows the same rules.
std::string nccl_host_id() {
  const char* id = std::getenv("NCCL_HOSTID");
  return id != nullptr ? id : "";
}

bool nccl_allows_shared_gpus(const char* enable, int nccl_version) {
  return enable != nullptr && std::string(enable) == "1" && nccl_version >= 23000;
}

bool nccl_shares_gpus() {
  const char* enable = std::getenv("NCCL_MULTI_RANK_GPU_ENABLE");
  int version = 0;
#if MNIST_DDP_HAVE_NCCL
  try {
    if (enable != nullptr) nccl().ncclGetVersion(&version);
  } catch (const std::exception&) {  // no NCCL to load: no version
  }
#endif
  return nccl_allows_shared_gpus(enable, version);
}

namespace {

/// Why this process cannot use CUDA, or "" when it can.
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

// The fields that travel, each once: numbers as ints, texts cut to a fixed size.
constexpr std::array kNumbers = {&RankCapability::node,         &RankCapability::local_rank,
                                 &RankCapability::visible_gpus, &RankCapability::gpu,
                                 &RankCapability::thread_level, &RankCapability::threads,
                                 &RankCapability::cores};
constexpr std::array kFlags = {&RankCapability::nccl_built, &RankCapability::nccl_shares_gpus};
constexpr std::array kTexts = {&RankCapability::host, &RankCapability::cuda_missing,
                               &RankCapability::gpu_text, &RankCapability::gpu_bus_id,
                               &RankCapability::nccl_host};

/// Trivially copyable, so it travels as bytes.
struct Record {
  std::array<int, kNumbers.size() + kFlags.size()> numbers{};  // the flags last
  std::array<std::array<char, 200>, kTexts.size()> texts{};
};

}  // namespace

int usable_cores() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return CPU_COUNT(&mask);
  return static_cast<int>(std::thread::hardware_concurrency());
}

RankCapability probe_capability(const World& world, const config::DeviceRequest& request) {
  RankCapability mine;
  mine.node = world.node_id();
  mine.local_rank = world.local_rank();
  mine.host = world.host();
  mine.nccl_built = nccl_built_in();
  mine.thread_level = world.thread_level();
  mine.nccl_host = nccl_host_id();
  mine.nccl_shares_gpus = nccl_shares_gpus();
  const int node_cores = static_cast<int>(std::thread::hardware_concurrency());
  mine.threads =
      request.threads > 0 ? request.threads : std::max(1, node_cores / world.local_size());
  mine.cores = usable_cores();
  if (request.device == config::Device::kCpu) {
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
  for (size_t f = 0; f < kNumbers.size(); ++f) record.numbers[f] = mine.*kNumbers[f];
  for (size_t f = 0; f < kFlags.size(); ++f) record.numbers[kNumbers.size() + f] = mine.*kFlags[f];
  for (size_t f = 0; f < kTexts.size(); ++f) {
    std::strncpy(record.texts[f].data(), (mine.*kTexts[f]).c_str(), record.texts[f].size() - 1);
  }
  std::vector<Record> records(world.size());
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Iallgather(&record, sizeof record, MPI_BYTE, records.data(), sizeof record,
                                MPI_BYTE, world.comm(), &request));
  world.watchdog().wait(request, "gathering every rank's devices");
  std::vector<RankCapability> all(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    for (size_t f = 0; f < kNumbers.size(); ++f) all[r].*kNumbers[f] = records[r].numbers[f];
    for (size_t f = 0; f < kFlags.size(); ++f) {
      all[r].*kFlags[f] = records[r].numbers[kNumbers.size() + f] != 0;
    }
    for (size_t f = 0; f < kTexts.size(); ++f) all[r].*kTexts[f] = records[r].texts[f].data();
  }
  return all;
}

std::string shared_gpu_reason(const std::vector<RankCapability>& ranks) {
  const auto same_gpu = [](const RankCapability& a, const RankCapability& b) {
    const bool same_host =
        a.nccl_host.empty() && b.nccl_host.empty() ? a.node == b.node : a.nccl_host == b.nccl_host;
    if (a.gpu < 0 || b.gpu < 0 || !same_host || (a.nccl_shares_gpus && b.nccl_shares_gpus)) {
      return false;
    }
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
