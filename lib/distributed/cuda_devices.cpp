// lib/distributed/cuda_devices.cpp — device queries through the CUDA runtime API.
#include "distributed/cuda_devices.hpp"

#include <array>

#include "common/error.hpp"
#include "distributed/gpu_libraries.hpp"

namespace mnist_ddp::distributed {

std::string CudaDevice::describe() const {
  return "cuda:" + std::to_string(index) + " (" + name + ", " + pci_bus_id + ")";
}

int cuda_device_count() {
  const CudaRuntimeLibrary* cuda = nullptr;
  try {
    cuda = &cuda_runtime();
  } catch (const CommError& e) {
    throw CommError(std::string("no CUDA device: ") + e.what());
  }
  int count = 0;
  // Fails at once: no driver gives InsufficientDriver, CUDA_VISIBLE_DEVICES="" NoDevice.
  const cudaError_t result = cuda->cudaGetDeviceCount(&count);
  if (result != cudaSuccess) {
    cuda->cudaGetLastError();  // the error is sticky until read; later checks must not see it
    // The runtime's text for a missing driver speaks of versions; say what it usually means.
    const char* hint = result == cudaErrorInsufficientDriver
                           ? "; no NVIDIA driver is loaded, or it is older than this CUDA runtime"
                           : "";
    throw CommError(std::string("no CUDA device: cudaGetDeviceCount: ") +
                    cuda->cudaGetErrorString(result) + " (" + cuda->cudaGetErrorName(result) + ")" +
                    hint);
  }
  if (count <= 0) {
    throw CommError("no CUDA device: cudaGetDeviceCount found " + std::to_string(count) +
                    " devices");
  }
  return count;
}

CudaDevice cuda_device(int index) {
  CudaDevice device;
  device.index = index;
  cudaDeviceProp properties{};
  MDDP_CUDA_CHECK(cuda_runtime().cudaGetDeviceProperties(&properties, index));
  device.name = properties.name;
  std::array<char, 32> bus_id{};  // "0000:18:00.0" and its terminator
  MDDP_CUDA_CHECK(
      cuda_runtime().cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), index));
  device.pci_bus_id = bus_id.data();
  return device;
}

CudaDevice select_device(int index) {
  MDDP_CUDA_CHECK(cuda_runtime().cudaSetDevice(index));
  return cuda_device(index);
}

}  // namespace mnist_ddp::distributed
