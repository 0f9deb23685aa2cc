// lib/distributed/gpu_libraries.cpp — the CUDA runtime and NCCL, dlopened; their result checks.
#include "distributed/gpu_libraries.hpp"

#include <dlfcn.h>

#include "common/error.hpp"

// Note [The NCCL backend loads its libraries]
// A build with the NCCL backend must still start where libcudart and libnccl are absent (CPU
// nodes and images, the Debian package), so neither is linked: each is dlopened on first use. The
// build-time file (LibTorch's own where it ships one) comes first, so the process holds one copy.

namespace mnist_ddp::distributed {
namespace {

// Two steps, so a name the headers define as a macro (cudaEventRecord_ptsz) becomes its symbol.
#define MDDP_SYMBOL_NAME(name) MDDP_SYMBOL_NAME_OF(name)
#define MDDP_SYMBOL_NAME_OF(name) #name
// Sets library.name from `handle`, or returns the missing symbol's name.
#define MDDP_RESOLVE(name)                                                                        \
  library.name = reinterpret_cast<decltype(library.name)>(dlsym(handle, MDDP_SYMBOL_NAME(name))); \
  if (library.name == nullptr) return MDDP_SYMBOL_NAME(name);

const char* resolve(void* handle, CudaRuntimeLibrary& library) {
  MDDP_CUDA_RUNTIME_FUNCTIONS(MDDP_RESOLVE)
  MDDP_RESOLVE(cudaMalloc)
  return nullptr;
}

const char* resolve(void* handle, NcclLibrary& library) {
  MDDP_NCCL_FUNCTIONS(MDDP_RESOLVE)
  return nullptr;
}

/// `Library` from the first of `candidates` that loads and has every function.
template <typename Library>
Library load_first(const std::vector<std::string>& candidates, const char* name) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    tried += tried.empty() ? "" : "; ";
    // Local binding: calls go through the pointers, so the handle is never closed.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = dlerror();
      tried += reason != nullptr ? reason : candidate + ": not loaded";
      continue;
    }
    Library library;
    if (const char* missing = resolve(handle, library)) {
      tried += candidate + ": has no " + missing;
      continue;
    }
    library.path = candidate;
    return library;
  }
  throw CommError(std::string(name) + " could not be loaded (tried " + tried +
                  "); install it, or point LD_LIBRARY_PATH at it");
}

}  // namespace

std::vector<std::string> default_cuda_runtime_candidates() {
  std::vector<std::string> candidates;
#ifdef MNIST_DDP_CUDA_RUNTIME_LIBRARY
  candidates.push_back(MNIST_DDP_CUDA_RUNTIME_LIBRARY);
#endif
  candidates.push_back("libcudart.so." + std::to_string(CUDART_VERSION / 1000));
  return candidates;
}

std::vector<std::string> default_nccl_candidates() {
  std::vector<std::string> candidates;
#ifdef MNIST_DDP_NCCL_LIBRARY
  candidates.push_back(MNIST_DDP_NCCL_LIBRARY);
#endif
  candidates.push_back("libnccl.so." + std::to_string(NCCL_MAJOR));
  return candidates;
}

CudaRuntimeLibrary load_cuda_runtime(const std::vector<std::string>& candidates) {
  return load_first<CudaRuntimeLibrary>(candidates, "the CUDA runtime");
}

NcclLibrary load_nccl(const std::vector<std::string>& candidates) {
  return load_first<NcclLibrary>(candidates, "NCCL");
}

const CudaRuntimeLibrary& cuda_runtime() {
  // A static whose initialiser throws stays uninitialised, so the next call tries again.
  static const CudaRuntimeLibrary library = load_cuda_runtime(default_cuda_runtime_candidates());
  return library;
}

const NcclLibrary& nccl() {
  static const NcclLibrary library = load_nccl(default_nccl_candidates());
  return library;
}

void check_cuda(cudaError_t result, const char* expression, const char* file, int line) {
  if (result == cudaSuccess) return;
  // Clear the sticky last error so a later, unrelated check does not report it again.
  cuda_runtime().cudaGetLastError();
  throw Error(ExitCode::kFailure, std::string(expression) +
                                      " failed: " + cuda_runtime().cudaGetErrorName(result) + " (" +
                                      cuda_runtime().cudaGetErrorString(result) + ") @ " + file +
                                      ":" + std::to_string(line));
}

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm) {
  std::string text = nccl().ncclGetErrorString(result);
  // NCCL keeps a more specific message for the last failure (which peer, which system call).
  const char* last = nccl().ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

void check_nccl(ncclResult_t result, const char* expression, const char* file, int line) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw CommError(std::string(expression) + " failed: " + nccl_error_text(result, nullptr) + " @ " +
                  file + ":" + std::to_string(line));
}

}  // namespace mnist_ddp::distributed
