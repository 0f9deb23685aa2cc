// lib/distributed/cuda_handles.hpp — provides: Event, Stream, DeviceBuffer (RAII); NCCL builds
// only.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include "distributed/gpu_check.hpp"
#include "distributed/gpu_libraries.hpp"

namespace mnist_ddp::distributed {

struct EventDestroyer {
  void operator()(cudaEvent_t event) const noexcept { cuda_runtime().cudaEventDestroy(event); }
};
struct StreamDestroyer {
  void operator()(cudaStream_t stream) const noexcept { cuda_runtime().cudaStreamDestroy(stream); }
};
struct DeviceFree {
  void operator()(void* memory) const noexcept { cuda_runtime().cudaFree(memory); }
};

using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroyer>;
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroyer>;
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;

/// An event for ordering only (no timing).
inline Event new_event() {
  cudaEvent_t event = nullptr;
  MDDP_CUDA_CHECK(cuda_runtime().cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return Event(event);
}

/// A stream not serialised with the legacy default stream (Note [NCCL stream ordering]).
inline Stream new_stream() {
  cudaStream_t stream = nullptr;
  MDDP_CUDA_CHECK(cuda_runtime().cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return Stream(stream);
}

/// `bytes` of zeroed device memory on the current device.
inline DeviceBuffer new_zeroed_buffer(std::size_t bytes) {
  void* memory = nullptr;
  MDDP_CUDA_CHECK(cuda_runtime().cudaMalloc(&memory, bytes));
  DeviceBuffer buffer(memory);
  MDDP_CUDA_CHECK(cuda_runtime().cudaMemset(memory, 0, bytes));
  return buffer;
}

}  // namespace mnist_ddp::distributed
