// lib/model/pool_window.hpp — provides: pool_window, unpool_window, kClipped (both kernels).
#pragma once

#include <cstdint>

#include <ATen/NumericUtils.h>

namespace mnist_ddp::model {

/// A winner byte: the window's maximum was not positive, so the ReLU passes no gradient.
constexpr std::uint8_t kClipped = 4;

// Functions of their own: GCC vectorizes the channel loops only with restrict parameters. `top`
// holds the top-left then (at + channels) the top-right pixel; `bottom` likewise.

/// One 2x2 window: its maximum after the ReLU, and the winner (0-3 in row order, or kClipped).
template <typename scalar_t>
void pool_window(const scalar_t* __restrict top, const scalar_t* __restrict bottom,
                 std::int64_t channels, scalar_t* __restrict best_of,
                 std::uint8_t* __restrict winner_of) {
  for (std::int64_t c = 0; c < channels; ++c) {
    const scalar_t window[4] = {top[c], top[c + channels], bottom[c], bottom[c + channels]};
    scalar_t best = window[0];
    std::uint8_t winner = 0;
    for (std::uint8_t k = 1; k < 4; ++k) {
      // As ATen: the first maximum in row order wins, and a NaN wins and stays.
      const bool wins = window[k] > best || at::_isnan(window[k]);
      best = wins ? window[k] : best;
      winner = wins ? k : winner;
    }
    const bool clipped = best <= scalar_t(0);  // as ATen's ReLU: a NaN passes, gradient too
    best_of[c] = clipped ? scalar_t(0) : best;
    winner_of[c] = clipped ? kClipped : winner;
  }
}

/// One 2x2 window, all channels: the gradient to the input that won, zero to the others.
template <typename scalar_t>
void unpool_window(const scalar_t* __restrict grad_of, const std::uint8_t* __restrict winner_of,
                   std::int64_t channels, scalar_t* __restrict top, scalar_t* __restrict bottom) {
  for (std::int64_t c = 0; c < channels; ++c) {
    const scalar_t grad = grad_of[c];
    const std::uint8_t winner = winner_of[c];
    top[c] = winner == 0 ? grad : scalar_t(0);
    top[c + channels] = winner == 1 ? grad : scalar_t(0);
    bottom[c] = winner == 2 ? grad : scalar_t(0);
    bottom[c + channels] = winner == 3 ? grad : scalar_t(0);
  }
}

}  // namespace mnist_ddp::model
