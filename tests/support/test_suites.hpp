// tests/support/test_suites.hpp — provides: select_gpu_suite(), by which the doctest runners
// run the cases of the test suite "gpu" only when asked (`--gpu`), so that ctest registers them
// as tests of their own and counts them as skipped where no CUDA device is visible.
#pragma once

#include <doctest/doctest.h>
#include <torch/cuda.h>

#include <cstdio>
#include <cstring>

namespace mnist_ddp::testing {

/// The exit code that ctest counts as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int kSkippedExitCode = 77;

/// With `--gpu` among the arguments, filters `context` to the test suite "gpu" and returns false
/// where no CUDA device is visible (the runner then exits kSkippedExitCode); without it, leaves
/// that suite out and returns true.
inline bool select_gpu_suite(doctest::Context& context, int argc, char** argv) {
  bool gpu_only = false;
  for (int i = 1; i < argc; ++i) gpu_only = gpu_only || std::strcmp(argv[i], "--gpu") == 0;
  context.addFilter(gpu_only ? "test-suite" : "test-suite-exclude", "gpu");
  if (gpu_only && !torch::cuda::is_available()) {
    std::printf("no CUDA device visible: the test cases of suite gpu are skipped\n");
    return false;
  }
  return true;
}

}  // namespace mnist_ddp::testing
