// tests/unit/test_checkpoint_store.cpp — CheckpointStore and read_checkpoint: file names and
// manifests, pruning to the newest K, falling back past damaged checkpoints, and the errors.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "common/error.hpp"
#include "support/folder_names.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

namespace fs = std::filesystem;
using checkpoint::CheckpointStore;
using checkpoint::read_checkpoint;
using checkpoint::StoredCheckpoint;

/// Writes `bytes` to `path`, replacing it.
void write_bytes(const std::string& path, const std::string& bytes) {
  write_file(path, Bytes(bytes.begin(), bytes.end()));
}

/// A valid checkpoint file whose contents differ with `step`.
std::string checkpoint_bytes(std::int64_t step) {
  checkpoint::CheckpointContents contents;
  contents.meta = {{"step", step}};
  contents.tensors = {{"w", at::full({3}, static_cast<double>(step), at::kFloat)}};
  return checkpoint::encode_checkpoint(contents);
}

/// The manifest fields a caller passes in for `step`.
nlohmann::json manifest_for(std::int64_t step) {
  return {{"step", step}, {"epoch", step / 10}, {"test_accuracy", 0.5}};
}

/// Saves a checkpoint for each of `steps`, in that order.
void save_steps(const CheckpointStore& store, const std::vector<std::int64_t>& steps) {
  for (std::int64_t step : steps) store.save(step, checkpoint_bytes(step), manifest_for(step));
}

/// Inverts every bit of the byte at `at` of the file at `path`.
void flip_byte(const std::string& path, std::size_t at) {
  std::string bytes = read_bytes(path);
  REQUIRE(at < bytes.size());
  bytes[at] = static_cast<char>(~bytes[at]);
  write_bytes(path, bytes);
}

/// Collects the warnings newest_intact gives.
struct Warnings {
  std::vector<std::string> messages;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

/// newest_intact falls back to `expected_path`, with one warning that mentions `mention`;
/// returns the warning.
std::string check_falls_back_to(const CheckpointStore& store, const std::string& expected_path,
                                const std::string& mention) {
  Warnings warnings;
  const auto newest = store.newest_intact(warnings.sink());
  REQUIRE(newest.has_value());
  CHECK(newest->path == expected_path);
  REQUIRE(warnings.messages.size() == 1);
  INFO("warning: ", warnings.messages[0]);
  CHECK(contains(warnings.messages[0], mention));
  return warnings.messages[0];
}

}  // namespace

TEST_SUITE("CheckpointStore") {
  TEST_CASE("save writes the checkpoint and a manifest that describes it") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    CHECK(store.folder() == dir.path());
    const std::string bytes = checkpoint_bytes(7);
    const std::string path = store.save(7, bytes, manifest_for(7));
    CHECK(path == dir.file("ckpt-step-000000007.mddp"));
    CHECK(read_bytes(path) == bytes);
    CHECK(folder_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000007.mddp", "ckpt-step-000000007.json"});

    const auto manifest = nlohmann::json::parse(read_bytes(dir.file("ckpt-step-000000007.json")));
    CHECK(manifest.at("file") == "ckpt-step-000000007.mddp");
    CHECK(manifest.at("bytes") == bytes.size());
    CHECK(manifest.at("crc32") == checkpoint::checkpoint_checksum(bytes));
    CHECK(manifest.at("step") == 7);
    CHECK(manifest.at("epoch") == 0);
    CHECK(manifest.at("test_accuracy") == 0.5);
  }

  TEST_CASE("step numbers fill all nine digits") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    CHECK(store.save(123456789, checkpoint_bytes(1), {}) == dir.file("ckpt-step-123456789.mddp"));
    CHECK(store.save(0, checkpoint_bytes(0), {}) == dir.file("ckpt-step-000000000.mddp"));
  }

  TEST_CASE("the store creates a missing folder, parents included") {
    TempDir dir;
    const std::string folder = dir.file("a/b/checkpoints");
    const CheckpointStore store(folder, /*keep_last=*/1);
    CHECK(fs::is_directory(folder));
    CHECK(!store.newest_intact([](const std::string&) {}).has_value());
  }

  TEST_CASE("keep_last keeps exactly the newest checkpoints, each with its manifest") {
    TempDir dir;
    write_bytes(dir.file("notes.txt"), "not a checkpoint; pruning must leave it alone");
    const CheckpointStore store(dir.path(), /*keep_last=*/2);
    save_steps(store, {10, 20, 30, 40, 50});
    CHECK(folder_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000040.mddp", "ckpt-step-000000040.json",
                                "ckpt-step-000000050.mddp", "ckpt-step-000000050.json",
                                "notes.txt"});
    CHECK(read_bytes(dir.file("ckpt-step-000000050.mddp")) == checkpoint_bytes(50));
    CHECK(read_bytes(dir.file("ckpt-step-000000040.mddp")) == checkpoint_bytes(40));
  }

  TEST_CASE("pruning goes by step, not by the order of saving") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/1);
    save_steps(store, {100, 9});  // 9 < 100 even though "9" > "100" as text
    CHECK(folder_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000100.mddp", "ckpt-step-000000100.json"});
  }

  TEST_CASE("newest_intact returns the newest checkpoint without warnings") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2, 3});
    Warnings warnings;
    const auto newest = store.newest_intact(warnings.sink());
    REQUIRE(newest.has_value());
    CHECK(newest->path == dir.file("ckpt-step-000000003.mddp"));
    CHECK(newest->bytes == checkpoint_bytes(3));
    CHECK(warnings.messages.empty());
  }

  TEST_CASE("a truncated newest checkpoint is skipped with a warning naming it") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2, 3});
    const std::string damaged = dir.file("ckpt-step-000000003.mddp");
    fs::resize_file(damaged, fs::file_size(damaged) - 1);
    Warnings warnings;
    const auto newest = store.newest_intact(warnings.sink());
    REQUIRE(newest.has_value());
    CHECK(newest->path == dir.file("ckpt-step-000000002.mddp"));
    CHECK(newest->bytes == checkpoint_bytes(2));
    REQUIRE(warnings.messages.size() == 1);
    INFO("warning: ", warnings.messages[0]);
    CHECK(contains(warnings.messages[0], damaged));
  }

  TEST_CASE("a checkpoint with a damaged byte is skipped with a warning naming it") {
    for (std::size_t at : {std::size_t{0}, std::size_t{30}, std::size_t{100}}) {
      CAPTURE(at);
      TempDir dir;
      const CheckpointStore store(dir.path(), /*keep_last=*/3);
      save_steps(store, {1, 2, 3});
      const std::string damaged = dir.file("ckpt-step-000000003.mddp");
      flip_byte(damaged, at);
      check_falls_back_to(store, dir.file("ckpt-step-000000002.mddp"), damaged);
    }
  }

  TEST_CASE("a damaged checkpoint is caught by its own CRC when the manifest agrees with it") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2});
    // Damage the file and rewrite its manifest to match, so only decode_checkpoint can tell.
    const std::string damaged = dir.file("ckpt-step-000000002.mddp");
    flip_byte(damaged, 40);
    const std::string bytes = read_bytes(damaged);
    auto manifest = nlohmann::json::parse(read_bytes(dir.file("ckpt-step-000000002.json")));
    manifest["bytes"] = bytes.size();
    manifest["crc32"] = checkpoint::checkpoint_checksum(bytes);
    write_bytes(dir.file("ckpt-step-000000002.json"), manifest.dump());

    const std::string warning =
        check_falls_back_to(store, dir.file("ckpt-step-000000001.mddp"), damaged);
    CHECK(contains(warning, "checksum"));
  }

  TEST_CASE("a missing checkpoint or a malformed manifest is skipped with a warning") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2, 3});
    fs::remove(dir.file("ckpt-step-000000003.mddp"));
    write_bytes(dir.file("ckpt-step-000000002.json"), "{\"file\": ");
    Warnings warnings;
    const auto newest = store.newest_intact(warnings.sink());
    REQUIRE(newest.has_value());
    CHECK(newest->path == dir.file("ckpt-step-000000001.mddp"));
    REQUIRE(warnings.messages.size() == 2);
    INFO("warnings: ", warnings.messages[0], " | ", warnings.messages[1]);
    CHECK(contains(warnings.messages[0], dir.file("ckpt-step-000000003.mddp")));
    CHECK(contains(warnings.messages[1], dir.file("ckpt-step-000000002.json")));
  }

  TEST_CASE("when every checkpoint is damaged newest_intact throws") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2});
    flip_byte(dir.file("ckpt-step-000000001.mddp"), 50);
    fs::resize_file(dir.file("ckpt-step-000000002.mddp"), 10);
    Warnings warnings;
    const std::string message =
        error_message<CheckpointError>([&] { store.newest_intact(warnings.sink()); });
    INFO("message: ", message);
    CHECK(contains(message, "none of the 2 checkpoints"));
    CHECK(contains(message, dir.path()));
    CHECK(warnings.messages.size() == 2);
  }

  TEST_CASE("an empty folder, or one without manifests, has no checkpoint") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    Warnings warnings;
    CHECK_FALSE(store.newest_intact(warnings.sink()).has_value());
    // A checkpoint without its manifest was never completed.
    write_bytes(dir.file("ckpt-step-000000005.mddp"), checkpoint_bytes(5));
    write_bytes(dir.file("ckpt-step-5.json"), "{}");  // not nine digits: not a manifest
    CHECK_FALSE(store.newest_intact(warnings.sink()).has_value());
    CHECK(warnings.messages.empty());
  }

  TEST_CASE("a manifest that names a path, not a file beside it, counts as damaged") {
    TempDir dir;
    const std::string folder = dir.file("store");
    const CheckpointStore store(folder, /*keep_last=*/3);
    save_steps(store, {1});
    // An intact checkpoint outside the folder, which a manifest must not reach.
    const std::string outside = checkpoint_bytes(2);
    write_bytes(dir.file("x.mddp"), outside);
    for (const std::string& file : {std::string("../x.mddp"), dir.file("x.mddp")}) {
      CAPTURE(file);
      nlohmann::json manifest = manifest_for(2);
      manifest["file"] = file;
      manifest["bytes"] = outside.size();
      manifest["crc32"] = checkpoint::checkpoint_checksum(outside);
      const std::string manifest_path = folder + "/ckpt-step-000000002.json";
      write_bytes(manifest_path, manifest.dump());

      check_falls_back_to(store, folder + "/ckpt-step-000000001.mddp", manifest_path);

      CHECK_THROWS_AS(read_checkpoint(manifest_path), CheckpointError);
    }
  }

  // Found by tests/fuzz/fuzz_checkpoint_store: nlohmann's value() threw json type_error, which
  // escaped as a crash instead of a skipped checkpoint (exit 4).
  TEST_CASE("a manifest that is not an object, or has a field of another kind, counts as damaged") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2});
    const std::string manifest_path = dir.file("ckpt-step-000000002.json");
    const std::string intact = read_bytes(manifest_path);
    nlohmann::json bytes_as_text = nlohmann::json::parse(intact);
    bytes_as_text["bytes"] = bytes_as_text["bytes"].dump();
    nlohmann::json file_as_number = nlohmann::json::parse(intact);
    file_as_number["file"] = 2;
    // Found by the fuzzer too: get<uint64_t>() of 1e30 is undefined behaviour (UBSan).
    nlohmann::json huge_bytes = nlohmann::json::parse(intact);
    huge_bytes["bytes"] = 1e30;
    nlohmann::json negative_crc = nlohmann::json::parse(intact);
    negative_crc["crc32"] = -1;
    nlohmann::json no_crc = nlohmann::json::parse(intact);
    no_crc.erase("crc32");
    for (const std::string& manifest :
         {std::string("[1, 2, 3]"), std::string("\"ckpt-step-000000002.mddp\""),
          bytes_as_text.dump(), file_as_number.dump(), huge_bytes.dump(), negative_crc.dump(),
          no_crc.dump()}) {
      CAPTURE(manifest);
      write_bytes(manifest_path, manifest);
      check_falls_back_to(store, dir.file("ckpt-step-000000001.mddp"),
                          manifest_path + ": malformed manifest");

      const std::string message =
          error_message<CheckpointError>([&] { read_checkpoint(manifest_path); });
      CHECK(contains(message, manifest_path + ": malformed manifest"));
    }
  }

  TEST_CASE("a manifest that names the folder or its parent counts as damaged") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1});
    const std::string manifest_path = dir.file("ckpt-step-000000002.json");
    for (const char* file : {".", ".."}) {
      CAPTURE(file);
      // The empty text read from a folder has size 0 and CRC-32 0: only the name stops it.
      write_bytes(manifest_path, nlohmann::json{{"file", file}, {"bytes", 0}, {"crc32", 0}}.dump());
      const std::string message =
          error_message<CheckpointError>([&] { read_checkpoint(manifest_path); });
      CHECK(contains(message, "names no checkpoint file"));
    }
  }

  TEST_CASE("a folder that cannot be created is a usage error naming it") {
    TempDir dir;
    write_bytes(dir.file("plain"), "a regular file, not a folder");
    for (const std::string& folder : {dir.file("plain"), dir.file("plain/checkpoints")}) {
      CAPTURE(folder);
      const std::string message =
          error_message<UsageError>([&] { const CheckpointStore store(folder, /*keep_last=*/1); });
      INFO("message: ", message);
      CHECK(contains(message, "--checkpoint-dir '" + folder + "'"));
    }
  }
}

TEST_SUITE("read_checkpoint") {
  TEST_CASE("reads a checkpoint by its .mddp path or by its manifest") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {4});
    const std::string file = dir.file("ckpt-step-000000004.mddp");

    const StoredCheckpoint direct = read_checkpoint(file);
    CHECK(direct.path == file);
    CHECK(direct.bytes == checkpoint_bytes(4));

    const StoredCheckpoint through_manifest = read_checkpoint(dir.file("ckpt-step-000000004.json"));
    CHECK(through_manifest.path == file);
    CHECK(through_manifest.bytes == checkpoint_bytes(4));
  }

  TEST_CASE("a manifest whose checkpoint is damaged is refused naming the checkpoint") {
    TempDir dir;
    const CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {4});
    const std::string file = dir.file("ckpt-step-000000004.mddp");
    flip_byte(file, 25);
    const std::string message = error_message<CheckpointError>(
        [&] { read_checkpoint(dir.file("ckpt-step-000000004.json")); });
    INFO("message: ", message);
    CHECK(contains(message, file));
    CHECK(contains(message, "truncated or damaged"));
  }

  TEST_CASE("a missing path is a CheckpointError naming it") {
    TempDir dir;
    for (const std::string& path : {dir.file("absent.mddp"), dir.file("absent.json")}) {
      const std::string message = error_message<CheckpointError>([&] { read_checkpoint(path); });
      INFO("message: ", message);
      CHECK(contains(message, "'" + path + "'"));
      CHECK(contains(message, "does not exist"));
    }
  }
}

}  // namespace mnist_ddp::testing
