// lib/checkpoint/checkpointer.hpp — provides: Checkpointer: rank 0 writes and reads checkpoints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "checkpoint/checkpoint_meta.hpp"
#include "checkpoint/checkpoint_point.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "common/log.hpp"
#include "config/train_config.hpp"
#include "distributed/communicator.hpp"
#include "distributed/world.hpp"

namespace mnist_ddp::checkpoint {

/// The results of the latest epoch, which manifests record beside the checkpoint.
struct EpochMetrics {
  std::int64_t epoch = 0;  // 1-based
  double train_loss = 0;
  double test_loss = 0;
  double test_accuracy = 0;  // in [0, 1]
};

class Checkpointer {
 public:
  /// Collective. Rank 0 creates --checkpoint-dir when set; failures end every rank (exit 2).
  Checkpointer(const config::TrainConfig& config, const distributed::World& world,
               distributed::Communicator& comm, const Log& log);

  /// Collective: the checkpoint --resume names (auto: the newest intact one), or none. Exit 4 on
  /// every rank when it is missing or damaged, 2 for a folder of another run (Note [A folder
  /// holds one run]).
  std::optional<LoadedCheckpoint> load();

  /// Collective with --checkpoint-dir: `collect` gathers the state on every rank and rank 0 writes
  /// it (Note [Every rank waits for the checkpoint]).
  void save(CheckpointPoint point, const std::function<CheckpointContents()>& collect);

  /// Remembers the latest epoch's results for the next manifest.
  void note_epoch(const EpochMetrics& metrics) { last_epoch_ = metrics; }

 private:
  const config::TrainConfig& config_;
  const distributed::World& world_;
  distributed::Communicator& comm_;
  const Log& log_;
  std::unique_ptr<CheckpointStore> store_;  // rank 0 only, when --checkpoint-dir is set
  std::string run_;                         // rank 0: the id of the run, new or resumed
  std::optional<EpochMetrics> last_epoch_;
};

}  // namespace mnist_ddp::checkpoint
