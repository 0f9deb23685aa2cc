// lib/train/checkpointer.cpp — checkpoint policy: who writes, who reads, what the manifest says.
#include "train/checkpointer.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <ATen/ATen.h>

#include "dist/agreed_failure.hpp"
#include "dist/broadcast_bytes.hpp"

namespace mnist_ddp::train {
namespace {

const char* describe(CheckpointPoint point) {
  switch (point) {
    case CheckpointPoint::kEveryNSteps:
      return "every-n-steps";
    case CheckpointPoint::kEpochEnd:
      return "epoch-end";
    case CheckpointPoint::kStop:
      return "stop-signal";
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

Checkpointer::Checkpointer(const config::TrainConfig& config, const dist::World& world,
                           dist::Communicator& comm, const io::Log& log)
    : config_(config), world_(world), comm_(comm), log_(log) {
  dist::run_agreed(world_, [&] {
    if (world_.rank() == 0 && !config_.checkpoint_dir.empty()) {
      store_ = std::make_unique<io::CheckpointStore>(config_.checkpoint_dir, config_.keep_last);
    }
  });
}

std::optional<io::CheckpointContents> Checkpointer::load() {
  if (config_.resume == "never") return std::nullopt;
  std::optional<io::StoredCheckpoint> stored;
  dist::run_agreed(world_, [&] {
    if (world_.rank() != 0) return;
    if (config_.resume == "auto") {
      stored = store_->newest_intact([](const std::string& warning) {
        std::fprintf(stderr, "mnist_ddp: warning: %s\n", warning.c_str());
      });
    } else {
      stored = io::read_checkpoint(config_.resume);
    }
    if (stored) io::decode_checkpoint(stored->bytes, stored->path);  // fail here, on rank 0
  });
  at::Tensor found = at::full({1}, stored ? 1 : 0, at::kLong);
  comm_.broadcast(found, /*root=*/0);
  if (found.item<std::int64_t>() == 0) {
    log_.line("# resume: no checkpoint in %s yet, starting from scratch",
              config_.checkpoint_dir.c_str());
    return std::nullopt;
  }
  const std::string path = stored ? stored->path : std::string();
  const std::string bytes = dist::broadcast_bytes(comm_, stored ? stored->bytes : "");
  io::CheckpointContents contents = io::decode_checkpoint(bytes, "broadcast checkpoint");
  // Logged before the contents are checked against the run, so read them defensively.
  const nlohmann::json progress = contents.meta.value("progress", nlohmann::json::object());
  const int writers = contents.meta.value("world_size", 0);
  log_.line("# resume: %s (step %lld, epoch %lld, written by %d rank%s)", path.c_str(),
            static_cast<long long>(progress.value("step", 0LL)),
            static_cast<long long>(progress.value("epoch", 0LL)) + 1, writers,
            writers == 1 ? "" : "s");
  return contents;
}

void Checkpointer::save(Trainer& trainer, CheckpointPoint point) {
  if (config_.checkpoint_dir.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  const io::CheckpointContents contents = trainer.checkpoint();  // collective
  if (world_.rank() != 0) return;

  const std::string bytes = io::encode_checkpoint(contents);
  const TrainProgress& progress = trainer.progress();
  nlohmann::json manifest = {{"format", "mnist_ddp checkpoint manifest"},
                             {"step", progress.step},
                             {"epochs_completed", progress.epoch},
                             {"epoch_position", progress.position},
                             {"reason", describe(point)},
                             {"world_size", comm_.size()},
                             {"model", config_.model},
                             {"created", utc_now()},
                             {"mnist_ddp_version", MNIST_DDP_VERSION}};
  if (last_epoch_) {
    manifest["metrics"] = {{"epoch", last_epoch_->epoch},
                           {"train_loss", last_epoch_->train_loss},
                           {"test_loss", last_epoch_->test.loss},
                           {"test_accuracy", last_epoch_->test.accuracy}};
  }
  const std::string path = store_->save(progress.step, bytes, manifest);
  const double pause =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_.line("# checkpoint (%s) step %lld -> %s: %.1f KB, training paused %.1f ms", describe(point),
            static_cast<long long>(progress.step), path.c_str(), bytes.size() / 1024.0,
            pause * 1000.0);
}

}  // namespace mnist_ddp::train
