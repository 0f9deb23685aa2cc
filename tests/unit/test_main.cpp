// tests/unit/test_main.cpp — provides: main for the unit tests; `--gpu` runs the cases that need
// a CUDA device (support/test_suites.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "support/test_suites.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  if (!mnist_ddp::testing::select_gpu_suite(context, argc, argv)) {
    return mnist_ddp::testing::kSkippedExitCode;
  }
  return context.run();
}
