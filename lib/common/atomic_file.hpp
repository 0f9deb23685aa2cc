// lib/common/atomic_file.hpp — provides: write_file_atomically (a crash leaves old or new),
// require_writable_folder
#pragma once

#include <string>
#include <string_view>

namespace mnist_ddp {

/// Writes, fsyncs and renames a temporary over `path`, then fsyncs the folder so the rename
/// survives a crash (mode: Note [File modes]). Throws Error naming the path and the call.
void write_file_atomically(const std::string& path, std::string_view contents);

/// Throws UsageError, `what` first, where `folder` is missing or no file can be created in it (a
/// read-only mount, permissions, a full disk), naming the file tried and the OS error.
void require_writable_folder(const std::string& folder, const std::string& what);

}  // namespace mnist_ddp
