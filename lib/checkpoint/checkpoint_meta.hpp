// lib/checkpoint/checkpoint_meta.hpp — provides: TrainProgress, CheckpointMeta, their JSON.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_file.hpp"

namespace mnist_ddp::checkpoint {

/// Where training stands; everything needed, with the parameters, to continue exactly.
struct TrainProgress {
  std::int64_t epoch = 0;       // 0-based epoch in progress
  std::int64_t step = 0;        // optimizer steps since the start of training
  std::int64_t position = 0;    // positions of the epoch's (padded) global order already trained
  double loss_sum = 0;          // epoch so far, all ranks: its report is the same after a resume
  std::int64_t loss_count = 0;  // rank-steps the loss sum covers
  std::int64_t images = 0;      // training images of the epoch so far, all ranks
};

/// The JSON header of a training checkpoint.
struct CheckpointMeta {
  std::string run;          // the run's id: made at its start, kept by every resume ("" before)
  int world_size = 0;       // ranks of the run that wrote it
  TrainProgress progress;   // where that run stood
  nlohmann::json training;  // the options that shape training (see training_checkpoint.cpp)
};

/// The header as written, with the versions of this build.
nlohmann::json to_json(const CheckpointMeta& meta);

/// Reads a header; throws CheckpointError naming a missing, mistyped or out-of-range field.
CheckpointMeta read_checkpoint_meta(const nlohmann::json& header);

/// A training checkpoint decoded, its header read once for every reader of a resume.
struct LoadedCheckpoint {
  CheckpointMeta meta;  // contents.meta, read
  CheckpointContents contents;
};

/// decode_checkpoint, then read_checkpoint_meta; throws CheckpointError as they do.
LoadedCheckpoint decode_training_checkpoint(const std::string& bytes, const std::string& origin);

}  // namespace mnist_ddp::checkpoint
