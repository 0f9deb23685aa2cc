// lib/report/versions.hpp — provides: component_versions: what is loaded at run time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mnist_ddp::report {

/// {component, version} pairs in a fixed order, for --version and the start banner.
std::vector<std::pair<std::string, std::string>> component_versions();

}  // namespace mnist_ddp::report
