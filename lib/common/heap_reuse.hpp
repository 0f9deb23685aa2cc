// lib/common/heap_reuse.hpp — provides: keep_freed_memory_for_reuse (glibc keeps step buffers)
#pragma once

namespace mnist_ddp {

/// Call once, first in main (Note [Heap reuse]). False where glibc refused a setting.
bool keep_freed_memory_for_reuse();

}  // namespace mnist_ddp
