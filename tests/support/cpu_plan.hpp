// tests/support/cpu_plan.hpp — provides: cpu_plan, the device plan of a CPU run over a
// communicator, as decide_plan makes it.
#pragma once

#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"

namespace mnist_ddp::testing {

/// Training on the CPU over MPI; the ranks communicate when there are several of them.
inline distributed::DevicePlan cpu_plan(const distributed::Communicator& comm) {
  distributed::DevicePlan plan;
  plan.communicates = comm.size() > 1;
  return plan;
}

}  // namespace mnist_ddp::testing
