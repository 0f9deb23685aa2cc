// lib/train/fault_injection.cpp — the faults of MNIST_DDP_FAULT.
#include "train/fault_injection.hpp"

#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/error.hpp"

namespace mnist_ddp::train {
namespace {

constexpr const char* kVariable = "MNIST_DDP_FAULT";
constexpr int kExitStatus = 7;

[[noreturn]] void malformed(const std::string& text, const std::string& problem) {
  throw UsageError(std::string(kVariable) + "='" + text + "': " + problem +
                   " (expected rank=R,step=S|phase=load|capture,kind=throw|abort|exit|hang|stop)");
}

std::int64_t parse_number(const std::string& text, const std::string& field,
                          const std::string& value) {
  size_t used = 0;
  std::int64_t number = -1;
  try {
    number = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || number < 0) {
    malformed(text, field + " must be a whole number >= 0, not '" + value + "'");
  }
  return number;
}

constexpr std::array<std::pair<const char*, FaultKind>, 5> kKinds = {{{"throw", FaultKind::kThrow},
                                                                      {"abort", FaultKind::kAbort},
                                                                      {"exit", FaultKind::kExit},
                                                                      {"hang", FaultKind::kHang},
                                                                      {"stop", FaultKind::kStop}}};

FaultKind parse_kind(const std::string& text, const std::string& value) {
  for (const auto& [name, kind] : kKinds) {
    if (value == name) return kind;
  }
  malformed(text, "unknown kind '" + value + "'");
}

const char* kind_name(FaultKind kind) {
  for (const auto& [name, k] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

}  // namespace

Fault parse_fault(const std::string& text) {
  Fault fault;
  bool has_rank = false;
  bool has_step = false;
  bool has_kind = false;
  bool has_phase = false;
  std::istringstream fields(text);
  for (std::string field; std::getline(fields, field, ',');) {
    const size_t equals = field.find('=');
    if (equals == std::string::npos) malformed(text, "'" + field + "' is not name=value");
    const std::string name = field.substr(0, equals);
    const std::string value = field.substr(equals + 1);
    if (name == "rank") {
      fault.rank = static_cast<int>(parse_number(text, name, value));
      has_rank = true;
    } else if (name == "step") {
      fault.step = parse_number(text, name, value);
      has_step = true;
    } else if (name == "phase") {
      if (value != "load" && value != "capture") {
        malformed(text, "unknown phase '" + value + "' (load or capture)");
      }
      fault.phase = value == "load" ? FaultPhase::kLoad : FaultPhase::kCapture;
      has_phase = true;
    } else if (name == "kind") {
      fault.kind = parse_kind(text, value);
      has_kind = true;
    } else {
      malformed(text, "unknown field '" + name + "'");
    }
  }
  if (!has_rank || has_step == has_phase || !has_kind) {
    malformed(text, "rank, kind and one of step or phase are needed");
  }
  return fault;
}

FaultInjector::FaultInjector(int rank, std::string host) : rank_(rank), host_(std::move(host)) {
  const char* text = std::getenv(kVariable);
  if (text != nullptr && *text != '\0') fault_ = parse_fault(text);
}

bool FaultInjector::planned(FaultPhase phase) const {
  return fault_ && fault_->rank == rank_ && fault_->phase == phase;
}

void FaultInjector::after_step(std::int64_t step) const {
  if (planned(FaultPhase::kAfterStep) && fault_->step == step) {
    fail("after step " + std::to_string(step));
  }
}

void FaultInjector::while_loading() const {
  if (planned(FaultPhase::kLoad)) fail("while loading the data");
}

void FaultInjector::while_capturing() const {
  if (planned(FaultPhase::kCapture)) fail("while capturing the training step");
}

void FaultInjector::fail(const std::string& when) const {
  const std::string what =
      std::string("injected fault (") + kVariable + "): " + kind_name(fault_->kind) + " " + when;
  if (fault_->kind == FaultKind::kThrow) throw std::runtime_error(what);
  std::fprintf(stderr, "[rank %d@%s] %s\n", rank_, host_.c_str(), what.c_str());
  std::fflush(stderr);
  switch (fault_->kind) {
    case FaultKind::kAbort:
      std::abort();
    case FaultKind::kExit:
      std::_Exit(kExitStatus);
    case FaultKind::kHang:
      for (;;) pause();  // only a signal ends it
    case FaultKind::kStop:
      raise(SIGSTOP);
      return;  // continued by SIGCONT: carry on
    case FaultKind::kThrow:
      return;
  }
}

}  // namespace mnist_ddp::train
