// lib/report/versions.hpp — provides: component_versions, loaded_blas: what is loaded at run time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mnist_ddp::report {

/// {component, version} pairs in a fixed order, for --version and the start banner.
std::vector<std::pair<std::string, std::string>> component_versions();

/// The BLAS LibTorch's GEMMs run on: OpenBLAS's description if loaded, the resolved path, and
/// which OpenBLAS core runs and why.
std::string loaded_blas();

}  // namespace mnist_ddp::report
