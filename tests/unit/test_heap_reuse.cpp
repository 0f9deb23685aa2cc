// tests/unit/test_heap_reuse.cpp — keep_freed_memory_for_reuse: a large block freed and
// allocated again is served from pages already mapped, with no new page faults. By default
// glibc maps every block over 32 MiB afresh (its largest mmap threshold), faulting each page.
#include <sys/resource.h>

#include <cstdlib>

#include <doctest/doctest.h>

#include "common/heap_reuse.hpp"

// GCC announces AddressSanitizer with a macro, clang with a feature test.
#if defined(__SANITIZE_ADDRESS__)
#define MNIST_DDP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MNIST_DDP_UNDER_ASAN 1
#endif
#endif
#ifndef MNIST_DDP_UNDER_ASAN
#define MNIST_DDP_UNDER_ASAN 0
#endif

namespace mnist_ddp::testing {
namespace {

long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/// Page faults taken while allocating `bytes`, writing to each of its pages and freeing it.
long faults_to_fill(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  const long before = minor_page_faults();
  void* block = std::malloc(bytes);
  REQUIRE(block != nullptr);
  // Volatile writes: the compiler may not drop them, nor the malloc/free pair around them.
  volatile char* const bytes_of_block = static_cast<char*>(block);
  for (std::size_t offset = 0; offset < bytes; offset += kPage) bytes_of_block[offset] = 1;
  std::free(block);
  return minor_page_faults() - before;
}

}  // namespace

TEST_SUITE("keep_freed_memory_for_reuse") {
  TEST_CASE("a freed 48 MiB block comes back without faulting its pages in again") {
#if MNIST_DDP_UNDER_ASAN
    // ASan's allocator replaces glibc's and refuses mallopt.
    CHECK_FALSE(keep_freed_memory_for_reuse());
#else
    REQUIRE(keep_freed_memory_for_reuse());
    constexpr std::size_t kBytes = std::size_t{48} << 20;  // 12,288 pages of 4 KiB
    faults_to_fill(kBytes);                                // grows the heap once
    CHECK(faults_to_fill(kBytes) < 64);
#endif
  }
}

}  // namespace mnist_ddp::testing
