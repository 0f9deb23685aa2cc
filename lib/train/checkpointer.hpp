// lib/train/checkpointer.hpp — provides: Checkpointer, which decides where checkpoints go and
// comes from: rank 0 writes them (with manifest and timing), and a resume reads one on rank 0
// and hands it to every rank.
#pragma once

#include <memory>
#include <optional>

#include "config/train_config.hpp"
#include "dist/communicator.hpp"
#include "dist/world.hpp"
#include "io/checkpoint_file.hpp"
#include "io/checkpoint_store.hpp"
#include "io/log.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {

class Checkpointer {
 public:
  /// Collective. Rank 0 creates --checkpoint-dir when set; failures end every rank (exit 2).
  Checkpointer(const config::TrainConfig& config, const dist::World& world,
               dist::Communicator& comm, const io::Log& log);

  /// Collective: the checkpoint --resume names (auto: the newest intact one in
  /// --checkpoint-dir, skipping damaged ones with a warning), read by rank 0 and broadcast.
  /// Empty for --resume never, or auto with no checkpoint yet. Every rank ends with exit code
  /// 4 when it is missing or damaged.
  std::optional<io::CheckpointContents> load();

  /// Collective: writes the trainer's checkpoint (rank 0) when a folder is configured, and logs
  /// where and how long training paused for it.
  void save(Trainer& trainer, CheckpointPoint point);

  /// Remembers the latest epoch's results for the next manifest.
  void note_epoch(const EpochReport& report) { last_epoch_ = report; }

 private:
  const config::TrainConfig& config_;
  const dist::World& world_;
  dist::Communicator& comm_;
  const io::Log& log_;
  std::unique_ptr<io::CheckpointStore> store_;  // rank 0 only, when --checkpoint-dir is set
  std::optional<EpochReport> last_epoch_;
};

}  // namespace mnist_ddp::train
