// lib/checkpoint/checkpoint_store.cpp — naming, manifests, pruning and verification of checkpoints.
#include "checkpoint/checkpoint_store.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/json_integer.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string stem_for(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "ckpt-step-%09lld", static_cast<long long>(step));
  return name;
}

/// Manifests in `folder`, newest (highest step) first.
std::vector<fs::path> manifests_newest_first(const std::string& folder) {
  static const std::regex pattern(R"(ckpt-step-(\d{9})\.json)");
  std::vector<fs::path> found;
  std::error_code ignored;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ignored)) {
    if (std::regex_match(entry.path().filename().string(), pattern)) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() > b.filename().string();  // zero-padded: text order is step order
  });
  return found;
}

std::string read_bytes(const std::string& path, const char* what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw CheckpointError("cannot read " + std::string(what) + " '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

/// The checkpoint a manifest describes, verified against the manifest's size and CRC-32.
StoredCheckpoint read_through_manifest(const fs::path& manifest_path) {
  std::string file;
  std::optional<std::uint64_t> bytes;
  std::optional<std::uint32_t> crc32;
  try {
    const nlohmann::json manifest =
        nlohmann::json::parse(read_bytes(manifest_path.string(), "manifest"));
    // value() throws too, for a manifest that is not an object or a field of another type.
    file = manifest.value("file", "");
    bytes = exact_integer<std::uint64_t>(manifest.value("bytes", nlohmann::json()));
    crc32 = exact_integer<std::uint32_t>(manifest.value("crc32", nlohmann::json()));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(manifest_path.string() + ": malformed manifest: " + e.what());
  }
  if (!bytes || !crc32) {
    throw CheckpointError(manifest_path.string() +
                          ": malformed manifest: no integer \"bytes\" and \"crc32\"");
  }
  // Only a plain file name beside the manifest: a manifest cannot point elsewhere (".." is a
  // file name to std::filesystem, and "." the folder itself).
  if (file.empty() || file == "." || file == ".." || fs::path(file).filename().string() != file) {
    throw CheckpointError(manifest_path.string() + ": the manifest names no checkpoint file");
  }
  StoredCheckpoint stored;
  stored.path = (manifest_path.parent_path() / file).string();
  stored.bytes = read_bytes(stored.path, "checkpoint");
  if (stored.bytes.size() != *bytes || checkpoint_checksum(stored.bytes) != *crc32) {
    throw CheckpointError(stored.path + ": size or checksum differs from its manifest " +
                          "(truncated or damaged)");
  }
  return stored;
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

std::string CheckpointStore::save(std::int64_t step, const std::string& bytes,
                                  nlohmann::json manifest) const {
  const std::string stem = stem_for(step);
  const std::string path = (fs::path(folder_) / (stem + ".mddp")).string();
  write_file_atomically(path, bytes);
  manifest["file"] = stem + ".mddp";
  manifest["bytes"] = bytes.size();
  manifest["crc32"] = checkpoint_checksum(bytes);
  try {
    write_file_atomically((fs::path(folder_) / (stem + ".json")).string(), manifest.dump(2) + "\n");
  } catch (const Error&) {
    // A file without a manifest is no checkpoint to the store, and pruning, which goes by
    // manifests, would never remove it: it goes now, with the failure.
    std::error_code ignored;
    fs::remove(path, ignored);
    throw;
  }

  const std::vector<fs::path> manifests = manifests_newest_first(folder_);
  for (size_t i = static_cast<size_t>(keep_last_); i < manifests.size(); ++i) {
    std::error_code ignored;
    fs::path data = manifests[i];
    fs::remove(manifests[i], ignored);  // manifest first: no manifest ever lacks its file
    fs::remove(data.replace_extension(".mddp"), ignored);
  }
  return path;
}

std::optional<StoredCheckpoint> CheckpointStore::newest_intact(
    const std::function<void(const std::string&)>& warn) const {
  const std::vector<fs::path> manifests = manifests_newest_first(folder_);
  for (const fs::path& manifest : manifests) {
    try {
      StoredCheckpoint stored = read_through_manifest(manifest);
      decode_checkpoint(stored.bytes, stored.path);  // the file's own CRC and structure too
      return stored;
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
  if (!fs::exists(path)) throw CheckpointError("checkpoint '" + path + "' does not exist");
  if (fs::path(path).extension() == ".json") return read_through_manifest(path);
  return StoredCheckpoint{path, read_bytes(path, "checkpoint")};
}

}  // namespace mnist_ddp::checkpoint
