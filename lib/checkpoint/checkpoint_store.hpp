// lib/checkpoint/checkpoint_store.hpp — provides: CheckpointStore, the checkpoint folder: atomic
// writes of checkpoint and manifest, pruning to the newest K, and finding the newest intact one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace mnist_ddp::checkpoint {

/// A checkpoint file read into memory and verified against its manifest.
struct StoredCheckpoint {
  std::string path;   // the .mddp file
  std::string bytes;  // its contents
};

/// Folder layout: ckpt-step-<9 digits>.mddp (the checkpoint) and ckpt-step-<9 digits>.json (its
/// manifest: step, epoch, metrics, size and CRC-32 of the checkpoint). The manifest is written
/// after the checkpoint, so a manifest always describes a complete file.
class CheckpointStore {
 public:
  /// Creates `folder` when missing. `keep_last` >= 1 checkpoints are kept.
  CheckpointStore(std::string folder, int keep_last);

  /// Writes checkpoint and manifest atomically, then removes all but the newest `keep_last`.
  /// `manifest` gets "file", "bytes" and "crc32" added. Returns the checkpoint's path.
  std::string save(std::int64_t step, const std::string& bytes, nlohmann::json manifest) const;

  /// The newest checkpoint that matches its manifest. Damaged ones are skipped, each reported
  /// through `warn`. Empty when the folder holds no checkpoint; throws CheckpointError when it
  /// holds some but none is intact.
  std::optional<StoredCheckpoint> newest_intact(
      const std::function<void(const std::string&)>& warn) const;

  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
  int keep_last_;
};

/// Reads a checkpoint named by the user: the .mddp file, or its .json manifest (then the file
/// it names, verified against it). Throws CheckpointError when missing or unreadable.
StoredCheckpoint read_checkpoint(const std::string& path);

}  // namespace mnist_ddp::checkpoint
