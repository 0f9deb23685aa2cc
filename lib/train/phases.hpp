// lib/train/phases.hpp — provides: Phase (a step's parts, each with its one name), PhaseTimes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace mnist_ddp::train {

/// Eager steps fill kData to kDrain, graphed steps kLaunch and kDevice (Note [The device's time in
/// the phases], step.cpp).
enum class Phase : std::size_t {
  kData,       // gathering and normalizing batches
  kForward,    // forward pass and loss
  kBackward,   // backward pass, with the bucket allreduces it starts
  kCommWait,   // allreduce wait
  kOptimizer,  // optimizer step
  kDrain,      // an eager step's wait for its queued device work, at the stop-flag read
  kLaunch,     // a graphed step's launch (on the CPU, its whole run)
  kDevice,     // a graphed step's device work: compute and collectives
};
inline constexpr std::size_t kPhaseCount = 8;
/// Each phase's one name: its timeline span, its metrics key (with "_s") and, '_' read as a
/// space, its label in the banner and the report.
inline constexpr std::array<const char*, kPhaseCount> kPhaseNames = {
    "data", "forward", "backward", "comm_wait", "optimizer", "drain", "launch", "device"};

constexpr const char* phase_name(Phase phase) {
  return kPhaseNames[static_cast<std::size_t>(phase)];
}
/// The phase's name with spaces, for people.
inline std::string phase_label(Phase phase) {
  std::string label = phase_name(phase);
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}
/// Every phase, in the order above.
inline constexpr std::array<Phase, kPhaseCount> kPhases = {
    Phase::kData,      Phase::kForward, Phase::kBackward, Phase::kCommWait,
    Phase::kOptimizer, Phase::kDrain,   Phase::kLaunch,   Phase::kDevice};

/// This rank's training seconds, per phase.
struct PhaseTimes {
  std::array<double, kPhaseCount> seconds{};

  double& operator[](Phase phase) { return seconds[static_cast<std::size_t>(phase)]; }
  double operator[](Phase phase) const { return seconds[static_cast<std::size_t>(phase)]; }
  double total() const {
    double sum = 0;
    for (const double s : seconds) sum += s;
    return sum;
  }
  PhaseTimes& operator+=(const PhaseTimes& other) {
    for (std::size_t i = 0; i < kPhaseCount; ++i) seconds[i] += other.seconds[i];
    return *this;
  }
  bool graphed() const { return (*this)[Phase::kLaunch] + (*this)[Phase::kDevice] > 0; }
  /// Whether `phase` is reported: every eager step's (to kOptimizer); others where they took time.
  bool shown(Phase phase) const { return phase <= Phase::kOptimizer || (*this)[phase] > 0; }
  /// comm_wait's share; unknown where graphed steps are among these.
  std::optional<double> comm_share() const {
    if (graphed()) return std::nullopt;
    return (*this)[Phase::kCommWait] / std::max(total(), 1e-12);
  }
};

}  // namespace mnist_ddp::train
