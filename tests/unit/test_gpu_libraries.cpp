// tests/unit/test_gpu_libraries.cpp — the CUDA runtime and NCCL opened when used: found where the
// build found them, refused with a message that names what was tried (only built with the NCCL
// backend).
#include <doctest/doctest.h>

#include <string>

#include "common/error.hpp"
#include "distributed/gpu_libraries.hpp"

namespace mnist_ddp::distributed {
namespace {

TEST_CASE("the libraries load from the files the build found, with every function") {
  const CudaRuntimeLibrary& cuda = cuda_runtime();
  CHECK(cuda.path == default_cuda_runtime_candidates().front());
  int runtime = 0;
  REQUIRE(cuda.cudaRuntimeGetVersion(&runtime) == cudaSuccess);
  CHECK(runtime / 1000 == CUDART_VERSION / 1000);  // the major the headers were compiled with

  const NcclLibrary& library = nccl();
  CHECK(library.path == default_nccl_candidates().front());
  int code = 0;
  REQUIRE(library.ncclGetVersion(&code) == ncclSuccess);
  CHECK(code / 10000 == NCCL_MAJOR);
  CHECK(std::string(library.ncclGetErrorString(ncclInvalidArgument)).size() > 0);
}

TEST_CASE("the default candidates end with the sonames") {
  CHECK(default_cuda_runtime_candidates().back() ==
        "libcudart.so." + std::to_string(CUDART_VERSION / 1000));
  CHECK(default_nccl_candidates().back() == "libnccl.so." + std::to_string(NCCL_MAJOR));
}

TEST_CASE("a later candidate is taken when an earlier one does not load") {
  const std::string found = default_nccl_candidates().front();
  const NcclLibrary library = load_nccl({"/nonexistent/libnccl.so.2", found});
  CHECK(library.path == found);
  CHECK(static_cast<bool>(library.ncclAllReduce));
}

TEST_CASE("a library that is missing is named with every file tried and the loader's reason") {
  try {
    load_nccl({"/nonexistent/libnccl.so.2", "libnccl-not-installed.so.2"});
    FAIL("a missing NCCL was loaded");
  } catch (const CommError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.rfind("NCCL could not be loaded (tried /nonexistent/libnccl.so.2: ", 0) == 0);
    CHECK(message.find("libnccl-not-installed.so.2: cannot open shared object file") !=
          std::string::npos);
    CHECK(message.find("LD_LIBRARY_PATH") != std::string::npos);
    CHECK((e.code() == ExitCode::kComm));
  }
}

TEST_CASE("a library without the functions is refused, naming the first one missing") {
  // NCCL's file is no CUDA runtime: it loads, but has no cudaDeviceGetPCIBusId.
  const std::string other = default_nccl_candidates().front();
  CHECK_THROWS_WITH_AS(load_cuda_runtime({other}),
                       ("the CUDA runtime could not be loaded (tried " + other +
                        ": has no cudaDeviceGetPCIBusId); install it, or point LD_LIBRARY_PATH "
                        "at it")
                           .c_str(),
                       CommError);
}

}  // namespace
}  // namespace mnist_ddp::distributed
