// lib/distributed/gpu_libraries.hpp — provides: cuda_runtime(), nccl(), dlopened; MDDP_CUDA_CHECK,
// MDDP_NCCL_CHECK; Event, Stream, DeviceBuffer (RAII); NCCL builds only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// Every function the program calls but cudaMalloc (below): a call missing here does not link.
// clang-format off
#define MDDP_CUDA_RUNTIME_FUNCTIONS(X) \
  X(cudaDeviceGetPCIBusId)             \
  X(cudaDriverGetVersion)              \
  X(cudaEventCreateWithFlags)          \
  X(cudaEventDestroy)                  \
  X(cudaEventQuery)                    \
  X(cudaEventRecord)                   \
  X(cudaFree)                          \
  X(cudaGetDeviceCount)                \
  X(cudaGetDeviceProperties)           \
  X(cudaGetErrorName)                  \
  X(cudaGetErrorString)                \
  X(cudaGetLastError)                  \
  X(cudaMemset)                        \
  X(cudaRuntimeGetVersion)             \
  X(cudaSetDevice)                     \
  X(cudaStreamCreateWithFlags)         \
  X(cudaStreamDestroy)                 \
  X(cudaStreamIsCapturing)             \
  X(cudaStreamWaitEvent)
#define MDDP_NCCL_FUNCTIONS(X) \
  X(ncclAllGather)             \
  X(ncclAllReduce)             \
  X(ncclBroadcast)             \
  X(ncclCommAbort)             \
  X(ncclCommDestroy)           \
  X(ncclCommFinalize)          \
  X(ncclCommGetAsyncError)     \
  X(ncclCommInitRankConfig)    \
  X(ncclGetErrorString)        \
  X(ncclGetLastError)          \
  X(ncclGetUniqueId)           \
  X(ncclGetVersion)
// clang-format on

#define MDDP_GPU_FUNCTION_POINTER(name) decltype(&::name) name = nullptr;
#define MDDP_CUDA_CHECK(expr) \
  ::mnist_ddp::distributed::check_cuda((expr), #expr, __FILE__, __LINE__)
#define MDDP_NCCL_CHECK(expr) \
  ::mnist_ddp::distributed::check_nccl((expr), #expr, __FILE__, __LINE__)

namespace mnist_ddp::distributed {

/// One pointer per function, typed from the runtime's own header.
struct CudaRuntimeLibrary {
  MDDP_CUDA_RUNTIME_FUNCTIONS(MDDP_GPU_FUNCTION_POINTER)
  // Typed by hand: cuda_runtime.h (which nccl.h includes) adds template overloads of it.
  cudaError_t (*cudaMalloc)(void**, size_t) = nullptr;
  std::string path;  // the file it was loaded from
};

struct NcclLibrary {
  MDDP_NCCL_FUNCTIONS(MDDP_GPU_FUNCTION_POINTER)
  std::string path;
};

/// The file found at build time, then the soname of the headers' major version.
std::vector<std::string> default_cuda_runtime_candidates();
std::vector<std::string> default_nccl_candidates();

/// The first candidate that opens and has every function; else CommError listing each reason.
CudaRuntimeLibrary load_cuda_runtime(const std::vector<std::string>& candidates);
NcclLibrary load_nccl(const std::vector<std::string>& candidates);

/// Loaded on the first call; a failed load throws and is retried on the next.
const CudaRuntimeLibrary& cuda_runtime();
const NcclLibrary& nccl();

void check_cuda(cudaError_t result, const char* expression, const char* file, int line);

/// ncclInProgress passes: the caller of a non-blocking communicator polls it.
void check_nccl(ncclResult_t result, const char* expression, const char* file, int line);

/// "<ncclGetErrorString> (<ncclGetLastError>)", for errors found by polling.
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm);

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

#undef MDDP_GPU_FUNCTION_POINTER
