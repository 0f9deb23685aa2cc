// lib/common/atomic_file.hpp — provides: write_file_atomically (a crash leaves old or new)
#pragma once

#include <string>
#include <string_view>

namespace mnist_ddp {

/// Writes, fsyncs and renames a temporary over `path`, then fsyncs the folder so the rename
/// survives a crash (mode: Note [File modes]). Throws Error naming the path and the call.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace mnist_ddp
