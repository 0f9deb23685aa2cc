// lib/model/ordered_sum.hpp — provides: sum_rows_in_order.
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

namespace mnist_ddp::model {

/// The rows of a contiguous float `rows` (n x m) summed in row order: the same bits whatever the
/// thread count that filled them.
inline at::Tensor sum_rows_in_order(const at::Tensor& rows) {
  // A lambda of its own: GCC vectorizes the loop only with restrict parameters.
  const auto add_row = [](float* __restrict sum, const float* __restrict row, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) sum[i] += row[i];
  };
  at::Tensor total = at::zeros({rows.size(1)}, rows.options());
  for (std::int64_t r = 0; r < rows.size(0); ++r) {
    add_row(total.data_ptr<float>(), rows.data_ptr<float>() + r * rows.size(1), rows.size(1));
  }
  return total;
}

}  // namespace mnist_ddp::model
