// lib/checkpoint/checkpoint_store.hpp — provides: CheckpointStore, read_checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_meta.hpp"

namespace mnist_ddp::checkpoint {

/// A checkpoint file read and verified against its manifest and its own header.
struct StoredCheckpoint : LoadedCheckpoint {
  std::string path;   // the .mddp file
  std::string bytes;  // its contents, as they were decoded
};

/// The largest checkpoint file read: a model's takes a few MB.
constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{1} << 30;

/// ckpt-step-<9 digits>.mddp, then its .json manifest: a manifest always has a complete file.
/// Note [A folder holds one run]: a run writes only into a folder it claimed, and prunes only its
/// own checkpoints older than the one just written, so no run deletes another's or its newest, and
/// `--resume auto` never picks up another run or a future an older resume abandoned.
class CheckpointStore {
 public:
  /// Creates `folder` when missing. `keep_last` >= 1 checkpoints are kept.
  CheckpointStore(std::string folder, int keep_last);

  /// Makes the folder run `run`'s, continuing `resumed` (none: fresh). Checkpoints it does not
  /// continue from go at the first save with `replace`; without, throws UsageError naming one.
  void claim(const std::string& run, const std::optional<CheckpointMeta>& resumed, bool replace);

  /// Writes checkpoint and manifest (plus run, file, bytes, crc32) atomically, prunes the run's
  /// older ones to `keep_last` in all; returns the checkpoint's path.
  std::string save(std::int64_t step, const std::string& bytes, nlohmann::json manifest);

  /// The newest intact checkpoint, each damaged one skipped through `warn`; empty for an empty
  /// folder, CheckpointError when none is intact.
  std::optional<StoredCheckpoint> newest_intact(
      const std::function<void(const std::string&)>& warn) const;

 private:
  std::string folder_;
  int keep_last_;
  std::string run_;                      // set by claim
  std::vector<std::string> to_replace_;  // manifests the first save deletes, with their files
};

/// Reads a user-named .mddp file or .json manifest; throws CheckpointError when it is missing,
/// not a regular file, too large, damaged, or named for another step than it holds.
StoredCheckpoint read_checkpoint(const std::string& path);

}  // namespace mnist_ddp::checkpoint
