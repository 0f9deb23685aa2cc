// lib/distributed/session.hpp — provides: Session, open_session, nccl_built_in.
#pragma once

#include <functional>
#include <memory>

#include "config/device_request.hpp"
#include "distributed/communicator.hpp"
#include "distributed/device_plan.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::distributed {

/// What a run trains over, the same kind on every rank.
struct Session {
  DevicePlan plan;
  std::unique_ptr<Communicator> communicator;  // any device (Note [Staged collectives])
  /// After each replay of a captured step (Note [Collectives in a captured step]).
  std::function<void()> after_replay = [] {};
};

/// Collective, agreed: the plan, then its communicator; sets this rank's intra-op threads.
Session open_session(const World& world, const config::DeviceRequest& request);

/// Whether this build has the NCCL backend (cmake -DMNIST_DDP_NCCL=AUTO|ON found CUDA and NCCL).
bool nccl_built_in();

}  // namespace mnist_ddp::distributed
