// lib/distributed/cuda_devices.hpp — provides: the visible CUDA devices; NCCL builds only.
#pragma once

#include <string>

namespace mnist_ddp::distributed {

struct CudaDevice {
  int index = 0;           // CUDA runtime index, after CUDA_VISIBLE_DEVICES
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "0000:18:00.0"

  /// "cuda:0 (NVIDIA H100 80GB HBM3, 0000:18:00.0)".
  std::string describe() const;
};

/// Throws CommError "no CUDA device: ..." when there is none or no usable driver.
int cuda_device_count();

CudaDevice cuda_device(int index);

/// cudaSetDevice for the calling thread.
CudaDevice select_device(int index);

}  // namespace mnist_ddp::distributed
