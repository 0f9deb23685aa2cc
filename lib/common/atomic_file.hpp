// lib/common/atomic_file.hpp — provides: write_file_atomically, require_writable_folder.
#pragma once

#include <string>
#include <string_view>

namespace mnist_ddp {

/// A crash leaves the old or the new file (mode: Note [File modes]); throws Error naming the path.
void write_file_atomically(const std::string& path, std::string_view contents);

/// Throws UsageError, `what` first, where `folder` is missing or no file can be created in it.
void require_writable_folder(const std::string& folder, const std::string& what);

}  // namespace mnist_ddp
