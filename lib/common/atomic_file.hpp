// lib/common/atomic_file.hpp — provides: write_file_atomically, which replaces a file so that a
// crash at any moment leaves either the old complete file or the new complete file, never a mix.
#pragma once

#include <string>
#include <string_view>

namespace mnist_ddp {

/// Writes `contents` to a temporary file in the folder of `path`, flushes and fsyncs it,
/// renames it over `path`, then fsyncs the folder so the rename itself survives a crash.
/// The file gets mode 0666 less the umask (Note [File modes]). Throws Error naming the path
/// and the failing system call.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace mnist_ddp
