// lib/checkpoint/checkpointer.cpp — who writes and reads checkpoints, what the manifest says.
#include "checkpoint/checkpointer.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include <ATen/ATen.h>

#include "common/atomic_file.hpp"
#include "common/process_clock.hpp"
#include "distributed/agreement.hpp"

namespace mnist_ddp::checkpoint {
namespace {

/// The manifest's "reason", in CheckpointPoint's order.
const char* describe(CheckpointPoint point) {
  constexpr const char* kReasons[] = {"every-n-steps", "epoch-end", "stop-signal",
                                      "target-reached"};
  return kReasons[static_cast<int>(point)];
}

/// 64 random bits as hex: unique among the runs that could share a folder.
std::string new_run_id() {
  std::random_device source;
  const std::uint64_t bits = (std::uint64_t{source()} << 32) | source();
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

Checkpointer::Checkpointer(const config::TrainConfig& config, const distributed::World& world,
                           distributed::Communicator& comm, const Log& log)
    : config_(config), world_(world), comm_(comm), log_(log) {
  distributed::run_agreed(world_, "opening the checkpoint folder", [&] {
    if (world_.rank() == 0 && !config_.checkpoint_dir.empty()) {
      store_ = std::make_unique<CheckpointStore>(config_.checkpoint_dir, config_.keep_last);
      // A folder that exists but takes no file would otherwise fail at the first checkpoint.
      if (!config_.eval_only) {
        require_writable_folder(config_.checkpoint_dir,
                                "--checkpoint-dir '" + config_.checkpoint_dir + "'");
      }
    }
  });
}

std::optional<LoadedCheckpoint> Checkpointer::load() {
  std::optional<StoredCheckpoint> stored;
  distributed::run_agreed(world_, "reading the checkpoint", [&] {
    if (world_.rank() != 0) return;
    if (config_.resume.from == config::ResumeFrom::kAuto) {
      stored = store_->newest_intact([](const std::string& warning) {
        std::fprintf(stderr, "mnist_ddp: warning: %s\n", warning.c_str());
      });
    } else if (config_.resume.from == config::ResumeFrom::kPath) {
      stored = read_checkpoint(config_.resume.path);
    }
    if (store_ && !config_.eval_only) {
      run_ = stored ? stored->meta.run : new_run_id();
      store_->claim(run_, stored ? std::optional(stored->meta) : std::nullopt,
                    config_.replace_checkpoints);
    }
  });
  if (config_.resume.from == config::ResumeFrom::kNever) return std::nullopt;
  at::Tensor found = at::full({1}, stored ? 1 : 0, at::kLong);
  comm_.broadcast(found, /*root=*/0);
  if (found.item<std::int64_t>() == 0) {
    log_.line("# resume: no checkpoint in %s yet, starting from scratch",
              config_.checkpoint_dir.c_str());
    return std::nullopt;
  }
  const std::string path = stored ? stored->path : std::string();
  const std::string bytes = distributed::broadcast_bytes(comm_, stored ? stored->bytes : "");
  // Rank 0 decoded the file as it read it.
  LoadedCheckpoint loaded =
      stored ? std::move(*stored) : decode_training_checkpoint(bytes, "broadcast checkpoint");
  const CheckpointMeta& meta = loaded.meta;
  log_.line("# resume: %s (step %lld, epoch %lld, written by %d rank%s)", path.c_str(),
            static_cast<long long>(meta.progress.step),
            static_cast<long long>(meta.progress.epoch) + 1, meta.world_size,
            meta.world_size == 1 ? "" : "s");
  return loaded;
}

// Note [Every rank waits for the checkpoint]: the write is agreed, so no rank returns before it is
// durable or known failed: a launcher that ends the others when one exits cannot cut it short.
void Checkpointer::save(CheckpointPoint point, const std::function<CheckpointContents()>& collect) {
  if (config_.checkpoint_dir.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  CheckpointContents contents = collect();  // collective
  std::string path;
  std::size_t size = 0;
  std::int64_t step = 0;
  distributed::run_agreed(world_, "writing the checkpoint", [&] {
    if (world_.rank() != 0) return;
    CheckpointMeta meta = read_checkpoint_meta(contents.meta);
    meta.run = run_;
    contents.meta = to_json(meta);
    const std::string bytes = encode_checkpoint(contents);
    const TrainProgress& progress = meta.progress;
    nlohmann::json manifest = {{"format", "mnist_ddp checkpoint manifest"},
                               {"step", progress.step},
                               {"epochs_completed", progress.epoch},
                               {"epoch_position", progress.position},
                               {"reason", describe(point)},
                               {"world_size", comm_.size()},
                               {"model", config::to_string(config_.model)},
                               {"created", utc_now()},
                               {"mnist_ddp_version", MNIST_DDP_VERSION}};
    if (last_epoch_) {
      manifest["metrics"] = {{"epoch", last_epoch_->epoch},
                             {"train_loss", last_epoch_->train_loss},
                             {"test_loss", last_epoch_->test_loss},
                             {"test_accuracy", last_epoch_->test_accuracy}};
    }
    path = store_->save(progress.step, bytes, manifest);
    size = bytes.size();
    step = progress.step;
  });
  if (world_.rank() != 0) return;
  const double pause = seconds_since(start);
  log_.line("# checkpoint (%s) step %lld -> %s: %.1f KB, training paused %.1f ms", describe(point),
            static_cast<long long>(step), path.c_str(), size / 1024.0, pause * 1000.0);
}

}  // namespace mnist_ddp::checkpoint
