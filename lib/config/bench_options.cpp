// lib/config/bench_options.cpp — bench_options(): every option of allreduce_bench, one entry each.
#include "config/bench_options.hpp"

namespace mnist_ddp::config {

const BasicOptionTable<BenchConfig>& bench_options() {
  using B = BenchConfig;
  constexpr Scope kJob = Scope::kJob;
  // One entry per option, as train_options(); "min-bytes,b" is also -b, as in nccl-tests.
  // clang-format off
  static const BasicOptionTable<BenchConfig> table = {
    {"Sweep", {
    option("backend", &B::backend, kJob, {}, "the transport: auto (nccl where every rank has a "
      "GPU and NCCL, else mpi), nccl or mpi"),
    option("min-bytes,b", &B::min_bytes, kJob, {at_least(4)}, "smallest message in bytes"),
    option("max-bytes,e", &B::max_bytes, kJob, {}, "largest message in bytes, at least "
      "--min-bytes"),
    option("factor,f", &B::factor, kJob, {at_least(2)}, "multiply the size by this between steps"),
    option("iters,n", &B::iters, kJob, {at_least(1)}, "timed iterations per size"),
    option("warmup,w", &B::warmup, kJob, {at_least(0)}, "untimed iterations per size before "
      "timing"),
    }},
  };
  // clang-format on
  return table;
}

}  // namespace mnist_ddp::config
