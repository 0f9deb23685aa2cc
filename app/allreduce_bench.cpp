// app/allreduce_bench.cpp — the allreduce benchmark: the same transport the training uses, swept
// over message sizes and reported in nccl-tests' format, so a user can check the fabric with the
// binaries that train. Every result is checked; wrong data is an error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process_clock.hpp"
#include "config/bench_options.hpp"
#include "distributed/agreement.hpp"
#include "distributed/device_plan.hpp"
#include "distributed/session.hpp"
#include "distributed/world.hpp"

namespace {

using namespace mnist_ddp;

struct Measurement {
  double microseconds = 0;  // per allreduce, the slowest rank's average
  std::int64_t wrong = 0;   // elements that differ from the expected sum, all ranks
};

/// Each rank contributes rank + 1 in every element, so every element must sum to n(n+1)/2.
Measurement measure(distributed::Communicator& comm, c10::Device device, std::int64_t count,
                    const config::BenchConfig& c) {
  at::Tensor buffer = at::empty({count}, at::TensorOptions(at::kFloat).device(device));
  // GPU work is asynchronous: waited for, so the clock sees the whole allreduce and nothing else.
  const auto wait_for_device = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  const float expected = comm.size() * (comm.size() + 1) / 2.0f;
  for (int i = 0; i < c.warmup; ++i) {
    buffer.fill_(comm.rank() + 1);
    comm.all_reduce(buffer, distributed::ReduceOp::kSum);
  }
  double seconds = 0;
  std::int64_t wrong = 0;
  for (int i = 0; i < c.iters; ++i) {
    buffer.fill_(comm.rank() + 1);  // outside the timed region
    wait_for_device();
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    comm.all_reduce(buffer, distributed::ReduceOp::kSum);
    wait_for_device();
    seconds += seconds_since(start);
    wrong += buffer.ne(expected).sum().item<std::int64_t>();
  }
  at::Tensor totals = at::tensor({seconds / c.iters * 1e6}, at::kDouble);
  comm.all_reduce(totals, distributed::ReduceOp::kMax);
  at::Tensor wrong_total = at::tensor({wrong}, at::kLong);
  comm.all_reduce(wrong_total, distributed::ReduceOp::kSum);
  return {totals.item<double>(), wrong_total.item<std::int64_t>()};
}

/// The plan and the communicator mnist_ddp would take for `backend` (Note [One plan for every
/// rank]), agreed on every rank; --backend mpi keeps to host memory whatever GPUs the ranks have.
int run(const distributed::World& world, const config::BenchConfig& c) {
  const Log log(world.rank(), /*all_ranks=*/false);
  config::DeviceRequest request;
  request.backend = c.backend;
  if (c.backend == config::Backend::kMpi) request.device = config::Device::kCpu;
  const distributed::Session session = distributed::open_session(world, request);
  const distributed::DevicePlan& plan = session.plan;
  distributed::Communicator& comm = *session.communicator;
  log.line("# allreduce_bench: backend %s, %d rank%s on %d node%s, float32 sum, in place",
           comm.backend().c_str(), comm.size(), comm.size() == 1 ? "" : "s", world.node_count(),
           world.node_count() == 1 ? "" : "s");
  if (!plan.note.empty()) log.line("# %s", plan.note.c_str());
  log.line("# %12s %12s %6s %6s %10s %8s %8s %7s", "size", "count", "type", "redop", "time",
           "algbw", "busbw", "#wrong");
  log.line("# %12s %12s %6s %6s %10s %8s %8s %7s", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
           "(GB/s)", "");
  const double bus_factor = comm.size() > 1 ? 2.0 * (comm.size() - 1) / comm.size() : 0.0;
  double bus_sum = 0;
  int sizes = 0;
  std::int64_t wrong = 0;
  for (std::int64_t bytes = c.min_bytes; bytes <= c.max_bytes; bytes *= c.factor) {
    const std::int64_t count = bytes / 4;
    const Measurement m = measure(comm, plan.device, count, c);
    const double algbw = count * 4 / m.microseconds / 1e3;  // bytes per microsecond / 1e3 = GB/s
    log.line("  %12lld %12lld %6s %6s %10.2f %8.3f %8.3f %7lld", static_cast<long long>(count * 4),
             static_cast<long long>(count), "float", "sum", m.microseconds, algbw,
             algbw * bus_factor, static_cast<long long>(m.wrong));
    bus_sum += algbw * bus_factor;
    ++sizes;
    wrong += m.wrong;
  }
  log.line("# Out of bounds values : %lld %s", static_cast<long long>(wrong),
           wrong ? "FAILED" : "OK");
  log.line("# Avg bus bandwidth    : %.4f GB/s", bus_sum / std::max(sizes, 1));
  return wrong == 0 ? 0 : static_cast<int>(ExitCode::kFailure);
}

}  // namespace

int main(int argc, char** argv) {
  return distributed::run_program(&argc, &argv, [&](distributed::World& world) {
    config::BenchConfig config;
    distributed::run_agreed(world, "parsing the options",
                            [&] { config = config::parse_bench_command(argc, argv); });
    if (config.help) {
      if (world.rank() == 0) std::printf("%s", config::bench_help_text().c_str());
      return 0;
    }
    return run(world, config);
  });
}
