// tests/support/folder_names.cpp — a folder's entries by name.
#include "support/folder_names.hpp"

#include <filesystem>

namespace mnist_ddp::testing {

std::set<std::string> folder_names(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

}  // namespace mnist_ddp::testing
