// tests/mpi/mpi_test_main.cpp — doctest runner for tests that run on every rank under mpirun.
// Every rank runs every test case in the same order, so collectives inside them match up. `--gpu`
// runs the cases that need a CUDA device (support/test_suites.hpp); a case of the test suite
// "at least N ranks" runs only in a world of N ranks or more.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <string>

#include "support/mpi_test_world.hpp"
#include "support/test_suites.hpp"

namespace mnist_ddp::testing {
namespace {
distributed::World* current_world = nullptr;
}  // namespace

const distributed::World& test_world() { return *current_world; }

WorldCommTimeout::WorldCommTimeout(double seconds) { current_world->set_comm_timeout(seconds); }

WorldCommTimeout::~WorldCommTimeout() { current_world->set_comm_timeout(kCommTimeoutSeconds); }

}  // namespace mnist_ddp::testing

int main(int argc, char** argv) {
  mnist_ddp::distributed::World world(&argc, &argv);
  mnist_ddp::testing::current_world = &world;
  world.set_comm_timeout(mnist_ddp::testing::kCommTimeoutSeconds);
  doctest::Context context(argc, argv);
  context.setOption("no-colors", true);  // ctest logs are files
  // The largest world ctest starts (mpi_4_ranks); doctest counts the cases left out as skipped.
  constexpr int kMostRanks = 4;
  for (int ranks = world.size() + 1; ranks <= kMostRanks; ++ranks) {
    context.addFilter("test-suite-exclude",
                      ("at least " + std::to_string(ranks) + " ranks").c_str());
  }
  if (!mnist_ddp::testing::select_gpu_suite(context, argc, argv)) {
    return mnist_ddp::testing::kSkippedExitCode;
  }
  const int failed = context.run();
  // A rank whose checks failed still reaches MPI_Finalize, and mpirun reports its exit code.
  return failed;
}
