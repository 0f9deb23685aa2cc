// lib/report/versions.cpp — version strings, read from the libraries actually loaded.
#include "report/versions.hpp"

#include <array>
#include <filesystem>

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <torch/version.h>

#include "common/blas_core.hpp"

#if MNIST_DDP_HAVE_NCCL
#include "common/error.hpp"
#include "distributed/gpu_libraries.hpp"
#endif

namespace mnist_ddp::report {
namespace {

std::string mpi_library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int length = 0;
  MPI_Get_library_version(text.data(), &length);
  std::string version(text.data(), length);
  return version.substr(0, version.find_first_of(",\n"));  // "Open MPI v4.1.4"
}

#if MNIST_DDP_HAVE_NCCL
/// 22809 -> "2.28.9" (NCCL's code since 2.9: major * 10000 + minor * 100 + patch).
std::string nccl_version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

/// 13000 -> "13.0" (CUDA's code: major * 1000 + minor * 10).
std::string cuda_version_text(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

/// "2.28.9 from <file> (built with 2.28.9)": the loaded library may differ from the header;
/// "not loaded: <why> (...)" without one.
std::string nccl_version() {
  const std::string built = " (built with " + std::to_string(NCCL_MAJOR) + "." +
                            std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH) + ")";
  try {
    const distributed::NcclLibrary& library = distributed::nccl();
    int code = 0;
    return (library.ncclGetVersion(&code) == ncclSuccess ? nccl_version_text(code) : "unknown") +
           " from " + library.path + built;
  } catch (const CommError& e) {
    return std::string("not loaded: ") + e.what() + built;
  }
}

/// "runtime 13.0 from <file>, driver 13.0 (built with 13.0)"; "..., no driver (...)" without one.
std::string cuda_version() {
  const std::string built = " (built with " + cuda_version_text(CUDART_VERSION) + ")";
  try {
    const distributed::CudaRuntimeLibrary& cuda = distributed::cuda_runtime();
    int runtime = 0;
    int driver = 0;
    const std::string runtime_text = cuda.cudaRuntimeGetVersion(&runtime) == cudaSuccess
                                         ? cuda_version_text(runtime)
                                         : "unknown";
    // Without libcuda the call fails, or reports 0.
    const std::string driver_text = cuda.cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0
                                        ? "driver " + cuda_version_text(driver)
                                        : "no driver";
    cuda.cudaGetLastError();  // leave no sticky error behind for the training code
    return "runtime " + runtime_text + " from " + cuda.path + ", " + driver_text + built;
  } catch (const CommError& e) {
    return std::string("runtime not loaded: ") + e.what() + built;
  }
}
#else
std::string nccl_version() { return "not built in"; }
std::string cuda_version() { return "not built in"; }
#endif

/// The BLAS LibTorch's GEMMs run on: the resolved path, and OpenBLAS's description and core.
std::string loaded_blas() {
  // Loaded objects named *blas*, resolved: Debian's update-alternatives picks libblas.so.3.
  std::string where;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (std::filesystem::path(path).filename().string().find("blas") == std::string::npos) {
          return 0;
        }
        std::error_code ignored;
        const std::string resolved = std::filesystem::canonical(path, ignored).string();
        std::string& found = *static_cast<std::string*>(out);
        if (!found.empty()) found += ", ";
        found += resolved.empty() ? path : resolved;
        return 0;
      },
      &where);
  using ConfigFn = const char* (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    const std::string core = blas_core_account();
    return std::string(config()) + " (" + where + ")" + (core.empty() ? "" : "; " + core);
  }
  return where.empty() ? "none found" : where;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> component_versions() {
  return {
      {"mnist_ddp", MNIST_DDP_VERSION}, {"LibTorch", TORCH_VERSION}, {"MPI", mpi_library_version()},
      {"NCCL", nccl_version()},         {"CUDA", cuda_version()},    {"BLAS", loaded_blas()},
  };
}

}  // namespace mnist_ddp::report
