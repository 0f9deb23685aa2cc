// lib/common/heap_reuse.hpp — provides: keep_freed_memory_for_reuse (glibc keeps step buffers)
#pragma once

#include <malloc.h>

namespace mnist_ddp {

// Note [Heap reuse]
// ~~~~~~~~~~~~~~~~~
// Each step frees and reallocates the same multi-megabyte tensors, which glibc would unmap and map
// afresh (zeroed pages faulted in); with mmap off and a high trim threshold they stay on the heap.
/// Call once, first in main. False where glibc refused a setting.
inline bool keep_freed_memory_for_reuse() {
  constexpr int kNoTrimBelow = 1 << 30;  // bytes of free heap top kept rather than returned
  const bool no_mmap = mallopt(M_MMAP_MAX, 0) == 1;
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, kNoTrimBelow) == 1;
  return no_mmap && no_trim;
}

}  // namespace mnist_ddp
