// tests/unit/test_device_plan.cpp — decide_plan on the capabilities of imagined jobs: one plan for
// every rank on nodes that differ (Note [One plan for every rank]), the fallbacks of auto and the
// refusals of explicit requests naming the ranks, and NCCL's one GPU per rank told by node and
// PCI bus id; the layout every rank gets.
#include <doctest/doctest.h>

#include <mpi.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "distributed/device_plan.hpp"

namespace mnist_ddp::distributed {
namespace {

/// `ranks` ranks on node `node` (its first rank's world rank) of host `host`, each seeing
/// `visible` GPUs with bus ids "<host>:<index>", on a build with NCCL and a threaded MPI, with
/// local rank + 1 threads on 4 cores.
void add_node(std::vector<RankCapability>& job, const std::string& host, int ranks, int visible) {
  const int node = static_cast<int>(job.size());
  for (int local = 0; local < ranks; ++local) {
    RankCapability r;
    r.node = node;
    r.local_rank = local;
    r.host = host;
    r.visible_gpus = visible;
    r.gpu = visible > 0 ? local % visible : -1;
    r.gpu_text = visible > 0 ? "cuda:" + std::to_string(r.gpu) : "";
    r.gpu_bus_id = visible > 0 ? host + ":" + std::to_string(r.gpu) : "";
    r.cuda_missing = visible > 0 ? "" : "no CUDA device is visible to this process";
    r.nccl_built = true;
    r.thread_level = MPI_THREAD_SERIALIZED;
    r.threads = local + 1;
    r.cores = 4;
    job.push_back(r);
  }
}

using config::Backend;
using config::Device;

config::TrainConfig options(Device device, Backend backend) {
  config::TrainConfig config;
  config.device = device;
  config.backend = backend;
  return config;
}

/// The plan of every rank, after checking that they agree on device type and transport.
std::vector<DevicePlan> plans(const config::TrainConfig& config,
                              const std::vector<RankCapability>& job) {
  std::vector<DevicePlan> all;
  for (int rank = 0; rank < static_cast<int>(job.size()); ++rank) {
    all.push_back(decide_plan(config::device_request(config), job, rank));
    CHECK(all.back().backend == all.front().backend);
    CHECK(all.back().on_cuda() == all.front().on_cuda());
    CHECK(all.back().note == all.front().note);
    CHECK(all.back().communicates == all.front().communicates);
    CHECK(all.back().layout.size() == job.size());
  }
  return all;
}

/// The message every rank throws (the same on each), or "" when none does.
std::string refusal(const config::TrainConfig& config, const std::vector<RankCapability>& job) {
  std::string first;
  for (int rank = 0; rank < static_cast<int>(job.size()); ++rank) {
    try {
      decide_plan(config::device_request(config), job, rank);
      CHECK(first.empty());
    } catch (const Error& e) {
      if (rank == 0) first = e.what();
      CHECK(first == e.what());
    }
  }
  return first;
}

TEST_CASE("one rank per GPU on two 4-GPU nodes: NCCL on every rank, each on its own GPU") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 4, 4);
  add_node(job, "gpu02", 4, 4);
  const std::vector<DevicePlan> all = plans(options(Device::kAuto, Backend::kAuto), job);
  CHECK(all[0].backend == Backend::kNccl);
  CHECK(all[0].note.empty());
  CHECK(all[5].device == c10::Device(c10::kCUDA, 1));
  for (const DevicePlan& plan : all) {
    const RankPlacement& sixth = plan.layout[5];
    CHECK(sixth.rank == 5);
    CHECK(sixth.host == "gpu02");
    CHECK(sixth.local_rank == 1);
    CHECK(sixth.device == "cuda:1");
    CHECK(sixth.threads == 2);
    CHECK(sixth.cores == 4);
  }
}

TEST_CASE("8 + 4 ranks on two 4-GPU nodes: MPI on every rank, or nccl refused on every rank") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 8, 4);
  add_node(job, "gpu02", 4, 4);
  const std::vector<DevicePlan> all = plans(options(Device::kAuto, Backend::kAuto), job);
  CHECK(all[0].backend == Backend::kMpi);
  CHECK(all[11].backend == Backend::kMpi);  // a rank of the node that alone would have fitted
  CHECK(all[11].on_cuda());
  CHECK(all[0].note ==
        "--backend auto: MPI through host memory, as ranks 0 and 4 would share cuda:0 on gpu01: "
        "NCCL needs a GPU of its own for each rank (start no more ranks per node than it has "
        "GPUs)");
  const std::string refused = refusal(options(Device::kAuto, Backend::kNccl), job);
  CHECK(refused.rfind("--backend nccl: ranks 0 and 4 would share cuda:0 on gpu01", 0) == 0);
}

TEST_CASE("a node whose GPUs cannot be used: the CPU on every rank, or cuda refused naming it") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 4, 4);
  add_node(job, "gpu02", 4, 0);
  const std::vector<DevicePlan> all = plans(options(Device::kAuto, Backend::kAuto), job);
  CHECK_FALSE(all[0].on_cuda());
  CHECK(all[0].layout[1].device == "cpu");  // though it has a GPU
  CHECK(all[0].backend == Backend::kMpi);
  CHECK(all[0].note ==
        "--device auto: the CPU on every rank, as ranks 4, 5, 6, 7 (gpu02) cannot use CUDA (no "
        "CUDA device is visible to this process)");
  CHECK(refusal(options(Device::kCuda, Backend::kAuto), job) ==
        "--device cuda: ranks 4, 5, 6, 7 (gpu02): no CUDA device is visible to this process");
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job)
            .rfind("--backend nccl needs a CUDA device: ranks 4", 0) == 0);
}

TEST_CASE("no GPU anywhere: the CPU without a note; --device cpu never asks") {
  std::vector<RankCapability> job;
  add_node(job, "cpu01", 3, 0);
  CHECK(plans(options(Device::kAuto, Backend::kAuto), job)[0].note.empty());
  CHECK_FALSE(plans(options(Device::kAuto, Backend::kAuto), job)[0].on_cuda());
  CHECK(refusal(options(Device::kCpu, Backend::kAuto), job).empty());
}

TEST_CASE("srun --gpus-per-task=1: each task sees one GPU, its own, so NCCL") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 4, 1);
  for (int local = 0; local < 4; ++local) job[local].gpu_bus_id = "0000:1" + std::to_string(local);
  const std::vector<DevicePlan> all = plans(options(Device::kAuto, Backend::kAuto), job);
  CHECK(all[0].backend == Backend::kNccl);
  CHECK(all[3].device == c10::Device(c10::kCUDA, 0));
}

TEST_CASE("containers that give every node one host name are told apart by node") {
  std::vector<RankCapability> job;
  add_node(job, "container", 2, 2);
  add_node(job, "container", 2, 2);
  for (RankCapability& r : job) r.gpu_bus_id = "0000:0" + std::to_string(r.gpu);
  CHECK(plans(options(Device::kAuto, Backend::kNccl), job)[0].backend == Backend::kNccl);
}

TEST_CASE("without bus ids, the device index tells GPUs of a node apart") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 3, 2);
  for (RankCapability& r : job) r.gpu_bus_id.clear();
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job)
            .find("ranks 0 and 2 would share cuda:0") != std::string::npos);
}

TEST_CASE("a rank whose binary has no NCCL: MPI for all under auto, nccl refused") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 2, 2);
  job[1].nccl_built = false;
  CHECK(plans(options(Device::kAuto, Backend::kAuto), job)[0].backend == Backend::kMpi);
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job) ==
        "--backend nccl: the mnist_ddp of rank 1 (gpu01) has no NCCL backend (configure with the "
        "CUDA toolkit and NCCL, -DMNIST_DDP_NCCL=ON)");
}

TEST_CASE("--backend mpi on CUDA is kept, and needs MPI_THREAD_SERIALIZED on every rank") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 2, 2);
  CHECK(plans(options(Device::kAuto, Backend::kMpi), job)[1].backend == Backend::kMpi);
  CHECK(plans(options(Device::kAuto, Backend::kMpi), job)[1].on_cuda());
  job[1].thread_level = MPI_THREAD_FUNNELED;
  const std::string refused = refusal(options(Device::kAuto, Backend::kAuto), job);
  CHECK(refused.find("needs MPI_THREAD_SERIALIZED, but the MPI library of rank 1 (gpu01)") !=
        std::string::npos);
  CHECK(refusal(options(Device::kCpu, Backend::kAuto), job)
            .empty());  // the CPU path calls MPI from one thread
}

TEST_CASE("--mode dp: every GPU of the one process; refused under more ranks or without CUDA") {
  config::TrainConfig dp = options(Device::kAuto, Backend::kAuto);
  dp.mode = config::Mode::kDp;
  std::vector<RankCapability> one;
  add_node(one, "gpu01", 1, 3);
  const DevicePlan plan = plans(dp, one)[0];
  CHECK(plan.replicas.size() == 3);
  CHECK(plan.layout[0].device == "cuda:0 + 2 more GPU(s)");
  std::vector<RankCapability> two;
  add_node(two, "gpu01", 2, 3);
  CHECK(refusal(dp, two).find("2 ranks were started") != std::string::npos);
  std::vector<RankCapability> cpu;
  add_node(cpu, "cpu01", 1, 0);
  CHECK(refusal(dp, cpu).rfind("--mode dp drives GPUs and needs CUDA: no CUDA device", 0) == 0);
}

TEST_CASE("the ranks communicate when there are several, or one with --communicate-alone") {
  std::vector<RankCapability> one;
  add_node(one, "gpu01", 1, 1);
  std::vector<RankCapability> two;
  add_node(two, "cpu01", 2, 0);
  config::TrainConfig alone = options(Device::kAuto, Backend::kAuto);
  alone.communicate_alone = true;
  CHECK_FALSE(plans(options(Device::kAuto, Backend::kAuto), one)[0].communicates);
  CHECK(plans(alone, one)[0].communicates);
  CHECK(plans(options(Device::kCpu, Backend::kAuto), two)[0].communicates);
  CHECK(plans(options(Device::kAuto, Backend::kAuto), two)[0].communicates);
}

TEST_CASE("many ranks are named briefly") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 2, 2);
  add_node(job, "gpu02", 12, 0);
  CHECK(plans(options(Device::kAuto, Backend::kAuto), job)[0].note.find(
            "ranks 2, 3, 4, 5, 6, 7, 8, 9 and 4 more (gpu02)") != std::string::npos);
}

TEST_CASE("ranks on one GPU: refused as NCCL would, unless each has its own NCCL_HOSTID") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 8, 1);
  for (RankCapability& r : job) r.nccl_host = "rank" + std::to_string(r.local_rank);
  const std::vector<DevicePlan> all = plans(options(Device::kAuto, Backend::kNccl), job);
  CHECK(all[7].backend == Backend::kNccl);
  CHECK(all[7].device == c10::Device(c10::kCUDA, 0));
  CHECK(all[0].layout[7].nccl_host == "rank7");
  job[5].nccl_host = job[3].nccl_host;  // one host to NCCL again
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job) ==
        "--backend nccl: ranks 3 and 5 would share cuda:0 on gpu01: NCCL needs a GPU of its own "
        "for each rank (start no more ranks per node than it has GPUs)");
  job[5].nccl_host.clear();  // unset: the node, another host than NCCL_HOSTID's
  CHECK(plans(options(Device::kAuto, Backend::kNccl), job)[0].backend == Backend::kNccl);
}

TEST_CASE("ranks of one host share a GPU where NCCL_MULTI_RANK_GPU_ENABLE=1 and NCCL 2.30+ allow") {
  CHECK(nccl_allows_shared_gpus("1", 23000));
  CHECK_FALSE(nccl_allows_shared_gpus("1", 22809));  // an NCCL without the option
  CHECK_FALSE(nccl_allows_shared_gpus("0", 23000));
  CHECK_FALSE(nccl_allows_shared_gpus(nullptr, 23000));
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 4, 1);
  for (RankCapability& r : job) r.nccl_shares_gpus = true;
  CHECK(plans(options(Device::kAuto, Backend::kNccl), job)[3].device == c10::Device(c10::kCUDA, 0));
  job[2].nccl_shares_gpus = false;  // both ranks of a pair must have it
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job)
            .rfind("--backend nccl: ranks 0 and 2 would share", 0) == 0);
}

TEST_CASE("one NCCL_HOSTID on two nodes: one host to NCCL, whose GPUs are told by bus id") {
  std::vector<RankCapability> job;
  add_node(job, "gpu01", 1, 1);
  add_node(job, "gpu02", 1, 1);
  for (RankCapability& r : job) r.nccl_host = "shared";
  CHECK(plans(options(Device::kAuto, Backend::kNccl), job)[1].backend ==
        Backend::kNccl);  // two bus ids
  job[1].gpu_bus_id = job[0].gpu_bus_id;
  CHECK(refusal(options(Device::kAuto, Backend::kNccl), job)
            .rfind("--backend nccl: ranks 0 and 1 would share", 0) == 0);
}

}  // namespace
}  // namespace mnist_ddp::distributed
