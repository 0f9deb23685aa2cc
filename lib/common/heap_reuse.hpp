// lib/common/heap_reuse.hpp — provides: keep_freed_memory_for_reuse, which stops glibc from
// handing the per-step activation buffers back to the kernel only to fault them in again.
#pragma once

namespace mnist_ddp {

/// Makes glibc's malloc serve large blocks from its heap and keep freed ones; see Note [Heap
/// reuse] in heap_reuse.cpp. Call once, first thing in main. Returns false where the C library
/// refused a setting (nothing else changes then).
bool keep_freed_memory_for_reuse();

}  // namespace mnist_ddp
