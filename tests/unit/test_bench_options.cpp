// tests/unit/test_bench_options.cpp — parse_bench_command: --backend's names as mnist_ddp's,
// its default in --help, and the UsageError of a bad backend or sweep naming the option.
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

  TEST_CASE("a bad backend is a UsageError naming the option, the choices and the value") {
    CHECK(usage_error({"--backend", "gloo"}) ==
          "--backend must be one of auto, nccl, mpi (got gloo)");
    CHECK(contains(usage_error({"--backend"}), "--backend"));
    CHECK(contains(usage_error({"--factor", "1"}), "--factor"));
  }

  TEST_CASE("--help lists --backend with its default") {
    CHECK(contains(config::bench_help_text(), "--backend arg (=auto)"));
    CHECK(contains(config::bench_help_text(), "-b [ --min-bytes ] arg (=8)"));
  }
}

}  // namespace
}  // namespace mnist_ddp::testing
