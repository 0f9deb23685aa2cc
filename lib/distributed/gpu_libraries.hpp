// lib/distributed/gpu_libraries.hpp — provides: cuda_runtime(), nccl(), dlopened; NCCL builds only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

// Every function the program calls but cudaMalloc (below); the libraries are not linked, so a
// call missing here does not link.
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

/// The file found at build time, then the soname of the headers' major through the loader's search.
std::vector<std::string> default_cuda_runtime_candidates();
std::vector<std::string> default_nccl_candidates();

/// The first candidate that opens and has every function; else CommError listing each reason.
CudaRuntimeLibrary load_cuda_runtime(const std::vector<std::string>& candidates);
NcclLibrary load_nccl(const std::vector<std::string>& candidates);

/// Loaded on the first call; a failed load throws and is retried on the next.
const CudaRuntimeLibrary& cuda_runtime();
const NcclLibrary& nccl();

}  // namespace mnist_ddp::distributed

#undef MDDP_GPU_FUNCTION_POINTER
