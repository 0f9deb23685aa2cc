// lib/checkpoint/checkpointer.hpp — provides: Checkpointer, which decides where checkpoints go and
// comes from: rank 0 writes them (with manifest and timing), and a resume reads one on rank 0
// and hands it to every rank.
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

  /// Collective: the checkpoint --resume names (auto: the newest intact one in
  /// --checkpoint-dir, skipping damaged ones with a warning), read by rank 0 and broadcast.
  /// Empty for --resume never, or auto with no checkpoint yet. Every rank ends with exit code
  /// 4 when it is missing or damaged, and with 2 when a training run would write into a folder
  /// that holds checkpoints it does not continue from (Note [A folder holds one run]).
  std::optional<LoadedCheckpoint> load();

  /// Collective, when --checkpoint-dir is set (else nothing happens): `collect` gathers the run's
  /// state on every rank, rank 0 writes it, and the log says where and how long training paused.
  /// Returns on every rank only once the checkpoint is durable; a failed write ends every rank
  /// with the same exit code (Note [Every rank waits for the checkpoint]).
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
