// lib/distributed/gpu_libraries.cpp — the CUDA runtime and NCCL, opened with dlopen and resolved
// function by function.
#include "distributed/gpu_libraries.hpp"

#include <dlfcn.h>

#include "common/error.hpp"

// Note [The NCCL backend loads its libraries]
// The NCCL backend is compiled in wherever the CUDA toolkit and NCCL are found, but the program
// must still start where they are not installed: on the CPU nodes of a cluster, in the CPU
// container image, from the Debian package (no Debian package provides libnccl.so.2 or
// libcudart.so.13, so the package cannot depend on them). Linked normally, the program would be
// refused by the dynamic loader there before main. So neither library is linked: the backend
// opens each when it first needs it, and a machine without it gets a clear CommError (exit 5)
// from the run that asked for NCCL. A CPU run opens them only for rank 0's banner, which names
// the loaded versions or says why they could not be loaded, and trains on. The process must hold
// one copy of each (a second NCCL keeps state of its own): the build-time file comes first, and
// that is LibTorch's own where a CUDA LibTorch ships one (cmake/nccl.cmake); a file LibTorch loaded
// already is not loaded twice, as the loader recognises it by its file, or by the soname when the
// soname is the candidate.

namespace mnist_ddp::distributed {
namespace {

// Two steps, so that a function name the headers define as a macro becomes the symbol it stands
// for (built for per-thread default streams, cuda_runtime_api.h maps cudaEventRecord to
// cudaEventRecord_ptsz, for instance).
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
    // Local binding: every call goes through the resolved pointers. The handle is never closed,
    // as the pointers live as long as the process.
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

}  // namespace mnist_ddp::distributed
