// lib/report/versions.hpp — provides: component_versions, the versions of mnist_ddp and of the
// libraries it runs on (LibTorch, MPI, NCCL, CUDA, BLAS), as loaded at run time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mnist_ddp::report {

/// {component, version} pairs in a fixed order, for --version and the start banner.
std::vector<std::pair<std::string, std::string>> component_versions();

/// The BLAS library LibTorch's GEMMs run on: OpenBLAS's own description where OpenBLAS is
/// loaded, and the resolved path of the loaded libblas in any case.
std::string loaded_blas();

}  // namespace mnist_ddp::report
