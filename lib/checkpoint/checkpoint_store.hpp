// lib/checkpoint/checkpoint_store.hpp — provides: CheckpointStore, the checkpoint folder of one
// run: atomic writes of checkpoint and manifest, pruning to the run's newest K, and finding the
// newest intact one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_meta.hpp"

namespace mnist_ddp::checkpoint {

/// A checkpoint file read into memory and verified against its manifest and its own header.
struct StoredCheckpoint : LoadedCheckpoint {
  std::string path;   // the .mddp file
  std::string bytes;  // its contents, as they were decoded
};

/// The largest checkpoint file read: a model's takes a few MB.
constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{1} << 30;

/// Folder layout: ckpt-step-<9 digits>.mddp (the checkpoint) and ckpt-step-<9 digits>.json (its
/// manifest: the run's id, step, epoch, metrics, size and CRC-32 of the checkpoint). The manifest
/// is written after the checkpoint, so a manifest always describes a complete file.
///
/// Note [A folder holds one run]: a run writes only into a folder whose checkpoints it continues
/// (claim), and pruning removes only that run's checkpoints older than the one just written, so
/// no run deletes another's checkpoints or its own newest one, and `--resume auto` never picks up
/// another run or a future that a resume from an older checkpoint abandoned.
class CheckpointStore {
 public:
  /// Creates `folder` when missing. `keep_last` >= 1 checkpoints are kept.
  CheckpointStore(std::string folder, int keep_last);

  /// Makes the folder this run's: `run` is its id, `resumed` the checkpoint it continues (none
  /// for a fresh start). The checkpoints it would not continue from are those of a fresh start's
  /// folder, another run's, and its own intact ones after `resumed`. With `replace` they are
  /// deleted by the first save; without, throws UsageError naming the folder and one of them.
  void claim(const std::string& run, const std::optional<CheckpointMeta>& resumed, bool replace);

  /// Writes checkpoint and manifest atomically, then removes the claimed run's checkpoints
  /// before `step` but the newest `keep_last` - 1. `manifest` gets "run", "file", "bytes" and
  /// "crc32" added. Returns the checkpoint's path.
  std::string save(std::int64_t step, const std::string& bytes, nlohmann::json manifest);

  /// The newest checkpoint that matches its manifest and whose header holds the step of its
  /// name. Damaged ones are skipped, each reported through `warn`. Empty when the folder holds
  /// no checkpoint; throws CheckpointError when it holds some but none is intact.
  std::optional<StoredCheckpoint> newest_intact(
      const std::function<void(const std::string&)>& warn) const;

  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
  int keep_last_;
  std::string run_;                      // set by claim
  std::vector<std::string> to_replace_;  // manifests the first save deletes, with their files
};

/// Reads a checkpoint named by the user: the .mddp file, or its .json manifest (then the file
/// it names, verified against it). Throws CheckpointError when missing, not a regular file, over
/// kMaxCheckpointBytes, damaged, or named for another step than its header holds.
StoredCheckpoint read_checkpoint(const std::string& path);

}  // namespace mnist_ddp::checkpoint
