// tests/support/folder_names.hpp — provides: folder_names, what a folder holds, for tests that
// check which files an operation leaves behind.
#pragma once

#include <set>
#include <string>

namespace mnist_ddp::testing {

/// The names of everything in `folder` (not recursive).
std::set<std::string> folder_names(const std::string& folder);

}  // namespace mnist_ddp::testing
