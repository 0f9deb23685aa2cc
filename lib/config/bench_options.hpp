// lib/config/bench_options.hpp — provides: BenchConfig, its option table, parse_bench_command.
#pragma once

#include <cstdint>
#include <string>

#include "config/options.hpp"

namespace mnist_ddp::config {

/// The allreduce sweep, as nccl-tests' -b/-e/-f/-n/-w, over the transport training would choose.
struct BenchConfig {
  Backend backend = Backend::kAuto;             // decided as mnist_ddp's --backend
  std::int64_t min_bytes = 8;                   // first message size
  std::int64_t max_bytes = 64ll * 1024 * 1024;  // last message size
  int factor = 2;                               // each size is the previous one times this
  int iters = 20;                               // timed allreduces per size
  int warmup = 5;                               // untimed allreduces per size first
  bool help = false;
};

/// allreduce_bench's options (option_table.cpp), in --help order.
const BasicOptionTable<BenchConfig>& bench_options();

/// Parses the benchmark's command line; throws UsageError naming the bad option and its value.
BenchConfig parse_bench_command(int argc, const char* const argv[]);

/// The benchmark's --help text.
std::string bench_help_text();

}  // namespace mnist_ddp::config
