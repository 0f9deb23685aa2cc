// lib/train/phase_clock.hpp — provides: PhaseClock, which splits one optimizer step's time into
// its phases (data, forward, backward, comm_wait, optimizer).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "train/train_reports.hpp"

namespace mnist_ddp::train {

/// Adds each phase's time to `times` and, when the run is traced (`on_span` set), reports it
/// as a span of step `step`.
class PhaseClock {
 public:
  PhaseClock(PhaseTimes& times, const std::function<void(const Span&)>& on_span, std::int64_t step)
      : times_(times), on_span_(on_span), step_(step) {}

  /// Ends the phase `name` (counted in `field`) now; the next phase starts.
  void lap(double PhaseTimes::*field, const char* name) {
    const TraceClock::time_point now = TraceClock::now();
    times_.*field += std::chrono::duration<double>(now - mark_).count();
    if (on_span_) on_span_(Span{name, mark_, now, step_});
    mark_ = now;
  }

 private:
  PhaseTimes& times_;
  const std::function<void(const Span&)>& on_span_;
  std::int64_t step_;
  TraceClock::time_point mark_ = TraceClock::now();
};

}  // namespace mnist_ddp::train
