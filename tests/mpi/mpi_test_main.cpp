// tests/mpi/mpi_test_main.cpp — doctest runner for tests that run on every rank under mpirun.
// Every rank runs every test case in the same order, so collectives inside them match up.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "support/mpi_test_world.hpp"

namespace mnist_ddp::testing {
namespace {
const distributed::World* current_world = nullptr;
}  // namespace

const distributed::World& test_world() { return *current_world; }

}  // namespace mnist_ddp::testing

int main(int argc, char** argv) {
  mnist_ddp::distributed::World world(&argc, &argv);
  mnist_ddp::testing::current_world = &world;
  doctest::Context context(argc, argv);
  context.setOption("no-colors", true);  // ctest logs are files
  const int failed = context.run();
  // A rank whose checks failed still reaches MPI_Finalize, and mpirun reports its exit code.
  return failed;
}
