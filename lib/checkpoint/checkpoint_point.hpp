// lib/checkpoint/checkpoint_point.hpp — provides: CheckpointPoint, why a checkpoint is due.
#pragma once

namespace mnist_ddp::checkpoint {

/// Why a checkpoint is due; every rank gets the same calls in the same order.
enum class CheckpointPoint { kEveryNSteps, kEpochEnd, kStop, kTargetReached };

}  // namespace mnist_ddp::checkpoint
