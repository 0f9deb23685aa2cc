// tests/unit/test_fault_injection.cpp — MNIST_DDP_FAULT: every field in any order, each fault
// firing on its rank at its point only, and a clear usage error for anything else.
#include <doctest/doctest.h>

#include <cstdlib>

#include "common/error.hpp"
#include "train/fault_injection.hpp"

namespace mnist_ddp::train {
namespace {

TEST_CASE("a fault names its rank, step and kind, in any order") {
  const Fault fault = parse_fault("kind=hang,step=25,rank=3");
  CHECK(fault.rank == 3);
  CHECK(fault.step == 25);
  CHECK(fault.kind == FaultKind::kHang);
  CHECK(parse_fault("rank=0,step=1,kind=throw").kind == FaultKind::kThrow);
  CHECK(parse_fault("rank=0,step=1,kind=abort").kind == FaultKind::kAbort);
  CHECK(parse_fault("rank=0,step=1,kind=exit").kind == FaultKind::kExit);
  CHECK(parse_fault("rank=0,step=1,kind=stop").kind == FaultKind::kStop);
  CHECK(fault.phase == FaultPhase::kAfterStep);
}

TEST_CASE("a fault while loading or capturing: phase=load or phase=capture instead of a step") {
  const Fault fault = parse_fault("rank=2,phase=load,kind=hang");
  CHECK(fault.rank == 2);
  CHECK(fault.phase == FaultPhase::kLoad);
  CHECK(fault.kind == FaultKind::kHang);
  CHECK(parse_fault("kind=throw,phase=capture,rank=1").phase == FaultPhase::kCapture);
}

TEST_CASE("a fault fires on its rank at its point only") {
  ::setenv("MNIST_DDP_FAULT", "rank=1,phase=load,kind=throw", 1);
  CHECK_NOTHROW(FaultInjector(0, "h").while_loading());
  CHECK_NOTHROW(FaultInjector(1, "h").after_step(1));
  CHECK_NOTHROW(FaultInjector(1, "h").while_capturing());
  CHECK_THROWS_WITH(FaultInjector(1, "h").while_loading(),
                    "injected fault (MNIST_DDP_FAULT): throw while loading the data");
  ::setenv("MNIST_DDP_FAULT", "rank=1,phase=capture,kind=throw", 1);
  CHECK_NOTHROW(FaultInjector(0, "h").while_capturing());
  CHECK_NOTHROW(FaultInjector(1, "h").while_loading());
  CHECK_THROWS_WITH(FaultInjector(1, "h").while_capturing(),
                    "injected fault (MNIST_DDP_FAULT): throw while capturing the training step");
  ::setenv("MNIST_DDP_FAULT", "rank=1,step=3,kind=throw", 1);
  CHECK_NOTHROW(FaultInjector(1, "h").while_loading());
  CHECK_NOTHROW(FaultInjector(1, "h").after_step(2));
  CHECK_THROWS_WITH(FaultInjector(1, "h").after_step(3),
                    "injected fault (MNIST_DDP_FAULT): throw after step 3");
  ::unsetenv("MNIST_DDP_FAULT");
}

TEST_CASE("malformed faults are usage errors that say what is wrong") {
  const auto message = [](const char* text) {
    try {
      parse_fault(text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("rank=1,step=2,kind=explode").find("unknown kind 'explode'") != std::string::npos);
  CHECK(message("rank=1,step=2").find("rank, kind and one of step or phase are needed") !=
        std::string::npos);
  CHECK(message("rank=1,step=2,phase=load,kind=hang").find("one of step or phase") !=
        std::string::npos);
  CHECK(message("rank=1,phase=train,kind=hang").find("unknown phase 'train' (load or capture)") !=
        std::string::npos);
  CHECK(message("rank=one,step=2,kind=throw").find("rank must be a whole number >= 0, not 'one'") !=
        std::string::npos);
  CHECK(message("rank=1,step=-2,kind=throw").find("step must be") != std::string::npos);
  CHECK(message("rank=1,step=2x,kind=throw").find("not '2x'") != std::string::npos);
  CHECK(message("rank=1,step=2,kind=throw,when=now").find("unknown field 'when'") !=
        std::string::npos);
  CHECK(message("rank").find("'rank' is not name=value") != std::string::npos);
  CHECK(message("rank=1,step=2,kind=explode")
            .rfind("MNIST_DDP_FAULT='rank=1,step=2,kind=explode'", 0) == 0);
}

}  // namespace
}  // namespace mnist_ddp::train
