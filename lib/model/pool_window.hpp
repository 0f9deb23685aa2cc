// lib/model/pool_window.hpp — provides: pool_window, unpool_window, kept_if, kClipped.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

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
      // As ATen: the first maximum in row order wins, and a NaN wins and stays. `|`, not `||`:
      // GCC 14 vectorizes no loop with a short-circuit branch in it.
      const bool wins = (window[k] > best) | at::_isnan(window[k]);
      best = wins ? window[k] : best;
      winner = wins ? k : winner;
    }
    const bool clipped = best <= scalar_t(0);  // as ATen's ReLU: a NaN passes, gradient too
    best_of[c] = clipped ? scalar_t(0) : best;
    winner_of[c] = clipped ? kClipped : winner;
  }
}

/// `value` if `keep`, else +0, as a bitwise and: GCC vectorizes that in any loop, a select not.
template <typename scalar_t>
scalar_t kept_if(bool keep, scalar_t value) {
  using Bits =
      std::conditional_t<sizeof(scalar_t) == 2, std::uint16_t,
                         std::conditional_t<sizeof(scalar_t) == 4, std::uint32_t, std::uint64_t>>;
  static_assert(sizeof(Bits) == sizeof(scalar_t));
  Bits bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits &= static_cast<Bits>(0) - static_cast<Bits>(keep);
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

/// One 2x2 window, all channels: the gradient to the input that won, zero to the others.
template <typename scalar_t>
void unpool_window(const scalar_t* __restrict grad_of, const std::uint8_t* __restrict winner_of,
                   std::int64_t channels, scalar_t* __restrict top, scalar_t* __restrict bottom) {
  for (std::int64_t c = 0; c < channels; ++c) {
    const scalar_t grad = grad_of[c];
    const std::uint8_t winner = winner_of[c];
    top[c] = kept_if(winner == 0, grad);
    top[c + channels] = kept_if(winner == 1, grad);
    bottom[c] = kept_if(winner == 2, grad);
    bottom[c + channels] = kept_if(winner == 3, grad);
  }
}

}  // namespace mnist_ddp::model
