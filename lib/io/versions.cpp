// lib/io/versions.cpp — version strings, read from the libraries actually loaded.
#include "io/versions.hpp"

#include <array>
#include <filesystem>

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <torch/version.h>

namespace mnist_ddp::io {
namespace {

std::string mpi_library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int length = 0;
  MPI_Get_library_version(text.data(), &length);
  std::string version(text.data(), length);
  return version.substr(0, version.find_first_of(",\n"));  // "Open MPI v4.1.4"
}

/// Paths of the loaded shared objects whose file name mentions BLAS.
std::vector<std::string> loaded_blas_paths() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::string file = std::filesystem::path(path).filename().string();
        if (file.find("blas") != std::string::npos) {
          static_cast<std::vector<std::string>*>(out)->push_back(path);
        }
        return 0;
      },
      &paths);
  return paths;
}

}  // namespace

std::string loaded_blas() {
  // Debian picks the BLAS behind libblas.so.3 with update-alternatives; the resolved path
  // tells which one (reference, OpenBLAS, BLIS, MKL).
  std::string where;
  for (const std::string& path : loaded_blas_paths()) {
    std::error_code ignored;
    const std::string resolved = std::filesystem::canonical(path, ignored).string();
    if (!where.empty()) where += ", ";
    where += resolved.empty() ? path : resolved;
  }
  using ConfigFn = const char* (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    return std::string(config()) + " (" + where + ")";
  }
  return where.empty() ? "none found" : where;
}

std::vector<std::pair<std::string, std::string>> component_versions() {
  return {
      {"mnist_ddp", MNIST_DDP_VERSION}, {"LibTorch", TORCH_VERSION}, {"MPI", mpi_library_version()},
      {"NCCL", "not built in"},         {"CUDA", "not built in"},    {"BLAS", loaded_blas()},
  };
}

}  // namespace mnist_ddp::io
