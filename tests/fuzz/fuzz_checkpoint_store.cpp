// tests/fuzz/fuzz_checkpoint_store.cpp — provides: the libFuzzer harness of the checkpoint
// folder's loaders. Input: the text of a manifest (ckpt-step-000000001.json), placed in a folder
// beside an intact checkpoint (ckpt-step-000000001.mddp, 2 float32 and 1 uint8 tensor, written
// once). Then read_checkpoint on the manifest (--resume FILE.json) and newest_intact on the folder
// (--resume auto), each followed by decode_checkpoint of what they return, as on resume.
// Outcome: a checkpoint or CheckpointError.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "common/error.hpp"
#include "outcome.hpp"

namespace {

namespace fs = std::filesystem;
namespace checkpoint = mnist_ddp::checkpoint;
using mnist_ddp::fuzz::require_property;

/// The scratch folder of this process, removed at exit.
struct Folder {
  std::string path;
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "mnist_ddp_fuzz_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path = pattern;
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

const Folder& folder() {
  static const Folder scratch;
  return scratch;
}

void write(const std::string& path, const char* data, std::size_t size) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(data, static_cast<std::streamsize>(size));
  if (!file.flush()) std::abort();
}

/// The intact checkpoint beside the fuzzed manifest. Its size and CRC-32 are in the seed
/// manifests (tests/fuzz/corpus/fuzz_checkpoint_store/), so mutations start from a match.
std::string intact_checkpoint() {
  checkpoint::CheckpointContents contents;
  contents.meta = {{"format", "mnist_ddp checkpoint"},
                   {"world_size", 1},
                   {"training", nlohmann::json::object()},
                   {"progress",
                    {{"epoch", 0},
                     {"step", 1},
                     {"position", 0},
                     {"loss_sum", 0.0},
                     {"loss_count", 0},
                     {"images", 0}}}};
  contents.tensors = {{"w", at::tensor(std::vector<float>{1.0f, -2.0f})},
                      {"b", at::tensor(std::vector<std::uint8_t>{9})}};
  return checkpoint::encode_checkpoint(contents);
}

void decode(const checkpoint::StoredCheckpoint& stored) {
  require_property(!stored.path.empty(), "a checkpoint found has a path");
  checkpoint::decode_checkpoint(stored.bytes, stored.path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string bytes = intact_checkpoint();
  write(folder().path + "/ckpt-step-000000001.mddp", bytes.data(), bytes.size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string manifest = folder().path + "/ckpt-step-000000001.json";
  write(manifest, reinterpret_cast<const char*>(data), size);
  mnist_ddp::fuzz::expect_only<mnist_ddp::CheckpointError>(
      [&] { decode(checkpoint::read_checkpoint(manifest)); });
  mnist_ddp::fuzz::expect_only<mnist_ddp::CheckpointError>([&] {
    checkpoint::CheckpointStore store(folder().path, /*keep_last=*/3);
    const auto newest = store.newest_intact([](const std::string&) {});
    require_property(newest.has_value(), "a folder with a manifest is never empty");
    decode(*newest);
  });
  return 0;
}
