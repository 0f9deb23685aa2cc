// tests/support/intra_op_threads.hpp — provides: on_threads, f() on a given intra-op thread count.
#pragma once

#include <ATen/Parallel.h>

namespace mnist_ddp::testing {

/// f() with LibTorch's intra-op thread count set to `threads`, the previous count restored after.
template <typename Function>
auto on_threads(int threads, Function f) {
  struct Restore {
    int threads;
    ~Restore() { at::set_num_threads(threads); }
  } const restore{at::get_num_threads()};
  at::set_num_threads(threads);
  return f();
}

}  // namespace mnist_ddp::testing
