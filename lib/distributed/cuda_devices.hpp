// lib/distributed/cuda_devices.hpp — provides: the CUDA devices this process sees (count, name, PCI
// bus id) and the choice of one per local rank, on the CUDA runtime API alone (Debian's LibTorch
// has no CUDA; only built with the NCCL backend).
#pragma once

#include <string>

namespace mnist_ddp::distributed {

/// One CUDA device, as the rank layout prints it.
struct CudaDevice {
  int index = 0;           // CUDA runtime index, after CUDA_VISIBLE_DEVICES
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "0000:18:00.0"

  /// "cuda:0 (NVIDIA H100 80GB HBM3, 0000:18:00.0)".
  std::string describe() const;
};

/// Number of CUDA devices visible to this process. Throws CommError "no CUDA device: ..." when
/// there is none, no driver or no usable one; without a driver this returns at once.
int cuda_device_count();

/// Name and PCI bus id of device `index` (0 <= index < cuda_device_count()).
CudaDevice cuda_device(int index);

/// The device local rank `local_rank` uses: local_rank modulo `device_count` (under srun
/// --gpus-per-task=1 every task sees one device, its own, as device 0). Ranks that outnumber the
/// devices would share one, which NCCL refuses; make_nccl_communicator says so.
int device_for_local_rank(int local_rank, int device_count);

/// Makes device `index` current for the calling thread (cudaSetDevice) and returns it.
CudaDevice select_device(int index);

}  // namespace mnist_ddp::distributed
