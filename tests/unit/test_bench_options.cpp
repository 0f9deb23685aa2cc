// tests/unit/test_bench_options.cpp — parse_bench_command: --backend's names as mnist_ddp's, the
// sweep's long and nccl-tests' short options, the defaults in --help, and the UsageError of a bad
// backend or sweep naming the option and the value.
#include <initializer_list>
#include <vector>

#include <doctest/doctest.h>

#include "common/error.hpp"
#include "config/bench_options.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using config::Backend;

config::BenchConfig parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"allreduce_bench"};
  argv.insert(argv.end(), args);
  return config::parse_bench_command(static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(std::initializer_list<const char*> args) {
  return error_message<UsageError>([&] { parse(args); });
}

TEST_SUITE("parse_bench_command") {
  TEST_CASE("--backend: auto by default, and each of mnist_ddp's names") {
    CHECK(parse({}).backend == Backend::kAuto);
    CHECK(parse({"--backend", "nccl"}).backend == Backend::kNccl);
    CHECK(parse({"--backend", "mpi"}).backend == Backend::kMpi);
    CHECK(parse({"--backend=auto", "-n", "3"}).backend == Backend::kAuto);
    CHECK(parse({"--backend", "mpi", "-n", "3"}).iters == 3);
  }

  TEST_CASE("the sweep: nccl-tests' defaults, set by long or short options") {
    const config::BenchConfig defaults = parse({});
    CHECK(defaults.min_bytes == 8);
    CHECK(defaults.max_bytes == 64ll * 1024 * 1024);
    CHECK(defaults.factor == 2);
    CHECK(defaults.iters == 20);
    CHECK(defaults.warmup == 5);
    CHECK_FALSE(defaults.help);
    const config::BenchConfig sweep =
        parse({"-b", "16", "--max-bytes", "4096", "-f", "4", "--iters=3", "-w", "0"});
    CHECK(sweep.min_bytes == 16);
    CHECK(sweep.max_bytes == 4096);
    CHECK(sweep.factor == 4);
    CHECK(sweep.iters == 3);
    CHECK(sweep.warmup == 0);
    CHECK(parse({"-e", "4", "-b", "4", "-n", "1"}).max_bytes == 4);  // the least sweep
    CHECK(parse({"-h"}).help);
    CHECK(parse({"--help"}).help);
  }

  TEST_CASE("a bad backend or sweep is a UsageError naming the option, the rule and the value") {
    CHECK(usage_error({"--backend", "gloo"}) ==
          "--backend must be one of auto, nccl, mpi (got gloo)");
    CHECK(usage_error({"--min-bytes", "2"}) == "--min-bytes must be at least 4 (got 2)");
    CHECK(usage_error({"-b", "3"}) == "--min-bytes must be at least 4 (got 3)");
    CHECK(usage_error({"-b", "64", "-e", "32"}) ==
          "--max-bytes must be at least --min-bytes, 64 (got 32)");
    CHECK(usage_error({"--factor", "1"}) == "--factor must be at least 2 (got 1)");
    CHECK(usage_error({"-n", "0"}) == "--iters must be at least 1 (got 0)");
    CHECK(usage_error({"--warmup=-1"}) == "--warmup must be at least 0 (got -1)");
    CHECK(contains(usage_error({"--iters", "many"}), "'many'"));
    CHECK(contains(usage_error({"--backend"}), "--backend"));
    CHECK(contains(usage_error({"--sizes", "8"}), "--sizes"));
    CHECK(contains(usage_error({"mpi"}), "positional"));
  }

  TEST_CASE("--help lists every option with its default") {
    const std::string help = config::bench_help_text();
    CHECK(contains(help, "Usage: mpirun -np N allreduce_bench [options]"));
    CHECK(contains(help, "-h [ --help ]"));
    CHECK(contains(help, "--backend arg (=auto)"));
    CHECK(contains(help, "-b [ --min-bytes ] arg (=8)"));
    CHECK(contains(help, "-e [ --max-bytes ] arg (=67108864)"));
    CHECK(contains(help, "-f [ --factor ] arg (=2)"));
    CHECK(contains(help, "-n [ --iters ] arg (=20)"));
    CHECK(contains(help, "-w [ --warmup ] arg (=5)"));
  }
}

}  // namespace
}  // namespace mnist_ddp::testing
