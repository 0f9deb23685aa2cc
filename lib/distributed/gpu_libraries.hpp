// lib/distributed/gpu_libraries.hpp — provides: cuda_runtime() and nccl(), the CUDA runtime and
// NCCL functions the NCCL backend calls, each library loaded with dlopen on first use, so that a
// build with the backend starts, and trains on the CPU, where neither is installed (only built with
// the NCCL backend). Note [The NCCL backend loads its libraries].
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

// Every function of the two libraries the program calls, but cudaMalloc (below). Calls go through
// these tables, never to the libraries' own symbols, which are not linked: a call the list lacks
// does not link.
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

/// The CUDA runtime, loaded: one pointer per function, typed from the runtime's own header.
struct CudaRuntimeLibrary {
  MDDP_CUDA_RUNTIME_FUNCTIONS(MDDP_GPU_FUNCTION_POINTER)
  // Typed by hand: cuda_runtime.h (which nccl.h includes) adds template overloads of it.
  cudaError_t (*cudaMalloc)(void**, size_t) = nullptr;
  std::string path;  // the file it was loaded from
};

/// NCCL, loaded, as CudaRuntimeLibrary.
struct NcclLibrary {
  MDDP_NCCL_FUNCTIONS(MDDP_GPU_FUNCTION_POINTER)
  std::string path;
};

/// Where each library is looked for, in order: the file found when the program was built, then
/// the soname (libcudart.so.<major of the headers>, libnccl.so.<major>) through the dynamic
/// loader's search (LD_LIBRARY_PATH, ld.so.cache).
std::vector<std::string> default_cuda_runtime_candidates();
std::vector<std::string> default_nccl_candidates();

/// Loads the library from the first of `candidates` that opens and has every function. Throws
/// CommError "<library> could not be loaded (tried ...: <the loader's reason>) ..." when none does.
CudaRuntimeLibrary load_cuda_runtime(const std::vector<std::string>& candidates);
NcclLibrary load_nccl(const std::vector<std::string>& candidates);

/// The process's copy, loaded from the default candidates on the first call; a failed load is
/// tried again on the next call. Throws as the loaders do.
const CudaRuntimeLibrary& cuda_runtime();
const NcclLibrary& nccl();

}  // namespace mnist_ddp::distributed

#undef MDDP_GPU_FUNCTION_POINTER
