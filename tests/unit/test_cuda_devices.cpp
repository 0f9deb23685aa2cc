// tests/unit/test_cuda_devices.cpp — CUDA device queries: a clear, prompt error without a device
// (this machine and CI), and sane answers with one (only built with the NCCL backend).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "common/error.hpp"
#include "distributed/cuda_devices.hpp"

namespace mnist_ddp::distributed {
namespace {

TEST_CASE("cuda device count answers at once: a count, or the clear no-device error") {
  const auto start = std::chrono::steady_clock::now();
  int count = 0;
  std::string error;
  ExitCode code = ExitCode::kOk;
  try {
    count = cuda_device_count();
  } catch (const Error& e) {
    error = e.what();
    code = e.code();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Not a timing: a hang here would hang every run of the program on a machine without GPUs.
  CHECK(seconds < 10);
  if (error.empty()) {
    MESSAGE("a CUDA device is present: ", count, " visible; first: ", cuda_device(0).describe());
    CHECK(count >= 1);
    return;
  }
  CAPTURE(error);
  CHECK(error.rfind("no CUDA device: cudaGetDeviceCount", 0) == 0);
  CHECK((code == ExitCode::kComm));
  // A second call gives the same answer: the first error left nothing sticky behind.
  CHECK_THROWS_WITH_AS(cuda_device_count(), doctest::Contains("no CUDA device"), CommError);
  // A device's error, not communication's: exit code 1, naming the call and CUDA's error.
  try {
    select_device(0);
    FAIL("cudaSetDevice succeeded without a device");
  } catch (const Error& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK((e.code() == ExitCode::kFailure));
    CHECK(message.find("cudaSetDevice(index) failed: cudaError") != std::string::npos);
  }
}

TEST_CASE("a CUDA device has a name and a PCI bus id" * doctest::test_suite("gpu")) {
  const int count = cuda_device_count();
  for (int index = 0; index < count; ++index) {
    const CudaDevice device = cuda_device(index);
    CAPTURE(device.describe());
    CHECK(device.index == index);
    CHECK(!device.name.empty());
    CHECK(device.pci_bus_id.size() >= 12);  // "0000:18:00.0"
  }
}

TEST_CASE("CudaDevice describes itself for the rank layout") {
  CudaDevice device;
  device.index = 1;
  device.name = "NVIDIA H100 80GB HBM3";
  device.pci_bus_id = "0000:18:00.0";
  CHECK(device.describe() == "cuda:1 (NVIDIA H100 80GB HBM3, 0000:18:00.0)");
}

}  // namespace
}  // namespace mnist_ddp::distributed
