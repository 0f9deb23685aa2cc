// lib/common/atomic_file.hpp — provides: write_file_atomically (a crash leaves old or new),
// require_writable_folder
#pragma once

#include <string>
#include <string_view>

namespace mnist_ddp {

/// Writes, fsyncs and renames a temporary over `path`, then fsyncs the folder so the rename
/// survives a crash (mode: Note [File modes]). Throws Error naming the path and the call.
void write_file_atomically(const std::string& path, std::string_view contents);

/// Throws UsageError, `what` first, naming the file and the OS error, where no file can be
/// created in `folder` (a read-only mount, permissions, a full disk): a file made and removed.
void require_writable_folder(const std::string& folder, const std::string& what);

}  // namespace mnist_ddp
