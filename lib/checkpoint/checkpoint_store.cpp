// lib/checkpoint/checkpoint_store.cpp — checkpoint naming, manifests, claiming and pruning.
#include "checkpoint/checkpoint_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>

#include "checkpoint/checkpoint_file.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxManifestBytes = 1 << 20;  // a manifest takes about 500 bytes

std::string stem_for(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "ckpt-step-%09lld", static_cast<long long>(step));
  return name;
}

/// The step in a checkpoint's or manifest's file name, when it follows the layout.
std::optional<std::int64_t> named_step(const fs::path& path) {
  static const std::regex pattern(R"(ckpt-step-(\d{9})\.(json|mddp))");
  std::smatch match;
  const std::string name = path.filename().string();
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return std::stoll(match[1].str());
}

struct Listed {
  fs::path manifest;
  std::int64_t step = 0;
};

/// Manifests in `folder`, newest (highest step) first.
std::vector<Listed> manifests_newest_first(const std::string& folder) {
  std::vector<Listed> found;
  std::error_code ignored;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ignored)) {
    const std::optional<std::int64_t> step = named_step(entry.path());
    if (step && entry.path().extension() == ".json") found.push_back({entry.path(), *step});
  }
  std::sort(found.begin(), found.end(),
            [](const Listed& a, const Listed& b) { return a.step > b.step; });
  return found;
}

/// Regular file `path`'s bytes; a device, pipe or file over `max_bytes` is refused before reading.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it changes nothing for a file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw CheckpointError("cannot read " + std::string(what) + " '" + path +
                          "': " + std::strerror(errno));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    throw CheckpointError(std::string(what) + " '" + path + "' is not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes) {
    throw CheckpointError(std::string(what) + " '" + path + "' has " + std::to_string(size) +
                          " bytes, over the " + std::to_string(max_bytes) + " allowed");
  }
  std::string bytes(size + 1, '\0');  // one byte more: a file that grew is caught below
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      throw CheckpointError("cannot read " + std::string(what) + " '" + path +
                            "': " + std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  if (done != size) {
    throw CheckpointError(std::string(what) + " '" + path + "' changed size while being read");
  }
  bytes.resize(size);
  return bytes;
}

/// What a manifest says of its checkpoint.
struct Manifest {
  std::string run;
  std::string file;
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

Manifest read_manifest(const fs::path& path) {
  const std::string what = path.string() + ": malformed manifest";
  const nlohmann::json manifest = parse_bounded_json(
      read_regular_file(path.string(), kMaxManifestBytes, "manifest"), kMaxManifestBytes, what);
  Manifest read;
  std::optional<std::uint64_t> bytes;
  std::optional<std::uint32_t> crc32;
  try {
    // value() throws for a non-object or a mistyped field too.
    read.run = manifest.value("run", "");  // absent before run ids
    read.file = manifest.value("file", "");
    bytes = exact_integer<std::uint64_t>(manifest.value("bytes", nlohmann::json()));
    crc32 = exact_integer<std::uint32_t>(manifest.value("crc32", nlohmann::json()));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(what + ": " + e.what());
  }
  if (!bytes || !crc32) throw CheckpointError(what + ": no integer \"bytes\" and \"crc32\"");
  read.bytes = *bytes;
  read.crc32 = *crc32;
  // A plain name beside the manifest only (std::filesystem takes ".." for a file name).
  if (read.file.empty() || read.file == "." || read.file == ".." ||
      fs::path(read.file).filename().string() != read.file) {
    throw CheckpointError(path.string() + ": the manifest names no checkpoint file");
  }
  return read;
}

/// `bytes` (from `path`) decoded, its header holding `step` when the name gives one.
StoredCheckpoint verified(const std::string& path, std::string bytes,
                          std::optional<std::int64_t> step) {
  LoadedCheckpoint loaded = decode_training_checkpoint(bytes, path);
  if (step && *step != loaded.meta.progress.step) {
    throw CheckpointError(path + ": named for step " + std::to_string(*step) + " but holds step " +
                          std::to_string(loaded.meta.progress.step));
  }
  return {std::move(loaded), path, std::move(bytes)};
}

/// The checkpoint a manifest describes, verified against its size, CRC-32 and step.
StoredCheckpoint read_through_manifest(const fs::path& manifest_path) {
  const Manifest manifest = read_manifest(manifest_path);
  const std::string path = (manifest_path.parent_path() / manifest.file).string();
  std::string bytes =
      read_regular_file(path, std::min(manifest.bytes, kMaxCheckpointBytes), "checkpoint");
  if (bytes.size() != manifest.bytes || checkpoint_checksum(bytes) != manifest.crc32) {
    throw CheckpointError(path + ": size or checksum differs from its manifest " +
                          "(truncated or damaged)");
  }
  const std::optional<std::int64_t> manifest_step = named_step(manifest_path);
  const std::optional<std::int64_t> file_step = named_step(path);
  if (manifest_step && file_step && manifest_step != file_step) {
    throw CheckpointError(manifest_path.string() + ": the manifest names another step's file");
  }
  return verified(path, std::move(bytes), manifest_step ? manifest_step : file_step);
}

/// The run a listed manifest records; none when the manifest is damaged.
std::optional<std::string> run_of(const Listed& listed) {
  try {
    return read_manifest(listed.manifest).run;
  } catch (const CheckpointError&) {
    return std::nullopt;
  }
}

bool intact(const Listed& listed) {
  try {
    read_through_manifest(listed.manifest);
    return true;
  } catch (const CheckpointError&) {
    return false;
  }
}

void remove_checkpoint(fs::path manifest) {
  std::error_code ignored;
  fs::remove(manifest, ignored);  // manifest first: no manifest ever lacks its file
  fs::remove(manifest.replace_extension(".mddp"), ignored);
}

}  // namespace

CheckpointStore::CheckpointStore(std::string folder, int keep_last)
    : folder_(std::move(folder)), keep_last_(keep_last) {
  std::error_code error;
  fs::create_directories(folder_, error);
  if (error || !fs::is_directory(folder_)) {
    throw UsageError("cannot create --checkpoint-dir '" + folder_ + "': " + error.message());
  }
}

void CheckpointStore::claim(const std::string& run, const std::optional<CheckpointMeta>& resumed,
                            bool replace) {
  run_ = run;
  to_replace_.clear();
  for (const Listed& listed : manifests_newest_first(folder_)) {
    // A damaged manifest of a resumed run is left alone: `--resume auto` skipped it already.
    const bool foreign = !resumed || [&] {
      const std::optional<std::string> owner = run_of(listed);
      return owner && (*owner != run || (listed.step > resumed->progress.step && intact(listed)));
    }();
    if (foreign) to_replace_.push_back(listed.manifest.string());
  }
  if (to_replace_.empty() || replace) return;
  const std::string newest = fs::path(to_replace_.front()).replace_extension(".mddp").string();
  const std::string more =
      to_replace_.size() == 1 ? "" : " and " + std::to_string(to_replace_.size() - 1) + " more";
  throw UsageError(
      "--checkpoint-dir '" + folder_ + "' holds checkpoints " +
      (resumed ? "this run does not continue from (another run's, or written after step " +
                     std::to_string(resumed->progress.step) + ")"
               : "of an earlier run (continue it with --resume auto)") +
      ": " + newest + more +
      "; choose another --checkpoint-dir, or pass --replace-checkpoints to delete them once "
      "this run has written its first checkpoint");
}

std::string CheckpointStore::save(std::int64_t step, const std::string& bytes,
                                  nlohmann::json manifest) {
  const std::string stem = stem_for(step);
  const fs::path manifest_path = fs::path(folder_) / (stem + ".json");
  const std::string path = (fs::path(folder_) / (stem + ".mddp")).string();
  write_file_atomically(path, bytes);
  manifest["run"] = run_;
  manifest["file"] = stem + ".mddp";
  manifest["bytes"] = bytes.size();
  manifest["crc32"] = checkpoint_checksum(bytes);
  try {
    write_file_atomically(manifest_path.string(), manifest.dump(2) + "\n");
  } catch (const Error&) {
    // Pruning goes by manifests and would never remove a file without one.
    std::error_code ignored;
    fs::remove(path, ignored);
    throw;
  }

  for (const std::string& replaced : to_replace_) {
    if (replaced != manifest_path.string()) remove_checkpoint(replaced);  // else just rewritten
  }
  to_replace_.clear();
  int kept = 1;  // the checkpoint just written
  for (const Listed& listed : manifests_newest_first(folder_)) {
    if (listed.step >= step || run_of(listed) != run_) continue;
    if (kept < keep_last_) {
      ++kept;
    } else {
      remove_checkpoint(listed.manifest);
    }
  }
  return path;
}

std::optional<StoredCheckpoint> CheckpointStore::newest_intact(
    const std::function<void(const std::string&)>& warn) const {
  const std::vector<Listed> manifests = manifests_newest_first(folder_);
  for (const Listed& listed : manifests) {
    try {
      return read_through_manifest(listed.manifest);
    } catch (const CheckpointError& e) {
      warn(std::string("skipping damaged checkpoint: ") + e.what());
    }
  }
  if (!manifests.empty()) {
    throw CheckpointError("none of the " + std::to_string(manifests.size()) + " checkpoints in '" +
                          folder_ + "' is intact");
  }
  return std::nullopt;
}

StoredCheckpoint read_checkpoint(const std::string& path) {
  std::error_code ignored;
  if (!fs::exists(path, ignored)) {
    throw CheckpointError("checkpoint '" + path + "' does not exist");
  }
  if (fs::path(path).extension() == ".json") return read_through_manifest(path);
  return verified(path, read_regular_file(path, kMaxCheckpointBytes, "checkpoint"),
                  named_step(path));
}

}  // namespace mnist_ddp::checkpoint
