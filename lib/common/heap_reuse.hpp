// lib/common/heap_reuse.hpp — provides: keep_freed_memory_for_reuse (glibc keeps step buffers)
#pragma once

#include <malloc.h>

namespace mnist_ddp {

// Note [Heap reuse]
// ~~~~~~~~~~~~~~~~~
// Each step allocates and frees the same multi-megabyte tensors; glibc would mmap and unmap
// them, so every step faults in fresh zeroed pages. With mmap off and a high trim threshold the
// blocks stay on the heap for the next step. Peak memory is unchanged.
/// Call once, first in main. False where glibc refused a setting.
inline bool keep_freed_memory_for_reuse() {
  constexpr int kNoTrimBelow = 1 << 30;  // bytes of free heap top kept rather than returned
  const bool no_mmap = mallopt(M_MMAP_MAX, 0) == 1;
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, kNoTrimBelow) == 1;
  return no_mmap && no_trim;
}

}  // namespace mnist_ddp
