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
#include "checkpoint/checkpoint_meta.hpp"
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

/// A valid checkpoint file of `run` whose contents differ with `step`, its header's step.
std::string checkpoint_bytes(std::int64_t step, const std::string& run = "") {
  checkpoint::CheckpointMeta meta;
  meta.run = run;
  meta.world_size = 1;
  meta.progress.step = step;
  meta.training = nlohmann::json::object();
  checkpoint::CheckpointContents contents;
  contents.meta = checkpoint::to_json(meta);
  contents.tensors = {{"w", at::full({3}, static_cast<double>(step), at::kFloat)}};
  return checkpoint::encode_checkpoint(contents);
}

/// The manifest fields a caller passes in for `step`.
nlohmann::json manifest_for(std::int64_t step) {
  return {{"step", step}, {"epoch", step / 10}, {"test_accuracy", 0.5}};
}

/// Saves a checkpoint for each of `steps`, in that order.
void save_steps(CheckpointStore& store, const std::vector<std::int64_t>& steps) {
  for (std::int64_t step : steps) store.save(step, checkpoint_bytes(step), manifest_for(step));
}

/// The header of a checkpoint of `run` at `step`, as a resumed run knows it.
checkpoint::CheckpointMeta resumed_at(const std::string& run, std::int64_t step) {
  checkpoint::CheckpointMeta meta;
  meta.run = run;
  meta.progress.step = step;
  return meta;
}

/// Saves a checkpoint of the store's claimed run for each of `steps`, in that order.
void save_run_steps(CheckpointStore& store, const std::string& run,
                    const std::vector<std::int64_t>& steps) {
  for (std::int64_t step : steps) store.save(step, checkpoint_bytes(step, run), manifest_for(step));
}

/// The checkpoint files (.mddp) in `folder`.
std::set<std::string> checkpoint_names(const std::string& folder) {
  std::set<std::string> names;
  for (const std::string& name : folder_names(folder)) {
    if (fs::path(name).extension() == ".mddp") names.insert(name);
  }
  return names;
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
std::string check_falls_back_to(CheckpointStore& store, const std::string& expected_path,
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    CHECK(store.save(123456789, checkpoint_bytes(1), {}) == dir.file("ckpt-step-123456789.mddp"));
    CHECK(store.save(0, checkpoint_bytes(0), {}) == dir.file("ckpt-step-000000000.mddp"));
  }

  TEST_CASE("the store creates a missing folder, parents included") {
    TempDir dir;
    const std::string folder = dir.file("a/b/checkpoints");
    CheckpointStore store(folder, /*keep_last=*/1);
    CHECK(fs::is_directory(folder));
    CHECK(!store.newest_intact([](const std::string&) {}).has_value());
  }

  TEST_CASE("keep_last keeps exactly the newest checkpoints, each with its manifest") {
    TempDir dir;
    write_bytes(dir.file("notes.txt"), "not a checkpoint; pruning must leave it alone");
    CheckpointStore store(dir.path(), /*keep_last=*/2);
    save_steps(store, {10, 20, 30, 40, 50});
    CHECK(folder_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000040.mddp", "ckpt-step-000000040.json",
                                "ckpt-step-000000050.mddp", "ckpt-step-000000050.json",
                                "notes.txt"});
    CHECK(read_bytes(dir.file("ckpt-step-000000050.mddp")) == checkpoint_bytes(50));
    CHECK(read_bytes(dir.file("ckpt-step-000000040.mddp")) == checkpoint_bytes(40));
  }

  TEST_CASE("pruning goes by step, and never removes a later step than the one written") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/1);
    save_steps(store, {9, 100});
    CHECK(folder_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000100.mddp", "ckpt-step-000000100.json"});
    save_steps(store, {50});
    CHECK(checkpoint_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000050.mddp", "ckpt-step-000000100.mddp"});
  }

  TEST_CASE("newest_intact returns the newest checkpoint without warnings") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
      CheckpointStore store(dir.path(), /*keep_last=*/3);
      save_steps(store, {1, 2, 3});
      const std::string damaged = dir.file("ckpt-step-000000003.mddp");
      flip_byte(damaged, at);
      check_falls_back_to(store, dir.file("ckpt-step-000000002.mddp"), damaged);
    }
  }

  TEST_CASE("a damaged checkpoint is caught by its own CRC when the manifest agrees with it") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(folder, /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
          error_message<UsageError>([&] { CheckpointStore store(folder, /*keep_last=*/1); });
      INFO("message: ", message);
      CHECK(contains(message, "--checkpoint-dir '" + folder + "'"));
    }
  }
}

TEST_SUITE("CheckpointStore: a folder holds one run") {
  TEST_CASE("a fresh run refuses a folder with another run's checkpoints, naming the option") {
    TempDir dir;
    CheckpointStore earlier(dir.path(), /*keep_last=*/3);
    earlier.claim("aaaa", std::nullopt, /*replace=*/false);
    save_run_steps(earlier, "aaaa", {10});

    CheckpointStore fresh(dir.path(), /*keep_last=*/1);
    const std::string message =
        error_message<UsageError>([&] { fresh.claim("bbbb", std::nullopt, /*replace=*/false); });
    INFO("message: ", message);
    CHECK(contains(message, "--checkpoint-dir '" + dir.path() + "'"));
    CHECK(contains(message, dir.file("ckpt-step-000000010.mddp")));
    CHECK(contains(message, "--replace-checkpoints"));
    CHECK(checkpoint_names(dir.path()) == std::set<std::string>{"ckpt-step-000000010.mddp"});
  }

  TEST_CASE("--replace-checkpoints deletes the other run's only once this run has one") {
    TempDir dir;
    CheckpointStore earlier(dir.path(), /*keep_last=*/3);
    earlier.claim("aaaa", std::nullopt, /*replace=*/false);
    save_run_steps(earlier, "aaaa", {5, 10});

    CheckpointStore fresh(dir.path(), /*keep_last=*/1);
    fresh.claim("bbbb", std::nullopt, /*replace=*/true);
    CHECK(checkpoint_names(dir.path()).size() == 2);  // nothing deleted before a save
    save_run_steps(fresh, "bbbb", {5});               // the same name as one of the earlier run's
    CHECK(checkpoint_names(dir.path()) == std::set<std::string>{"ckpt-step-000000005.mddp"});
    const auto newest = fresh.newest_intact([](const std::string&) {});
    REQUIRE(newest.has_value());
    CHECK(newest->meta.run == "bbbb");
    CHECK(newest->bytes == checkpoint_bytes(5, "bbbb"));
  }

  TEST_CASE("pruning removes only the run's own checkpoints before the one just written") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/2);
    store.claim("aaaa", std::nullopt, /*replace=*/false);
    save_run_steps(store, "aaaa", {10, 20, 30});
    CHECK(checkpoint_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000020.mddp", "ckpt-step-000000030.mddp"});

    // Resumed from step 20 with step 30 damaged: `auto` skipped it, so it is no obstacle, and
    // the steps written after 20 never make pruning remove them in its place.
    fs::resize_file(dir.file("ckpt-step-000000030.mddp"), 10);
    CheckpointStore resumed(dir.path(), /*keep_last=*/1);
    resumed.claim("aaaa", resumed_at("aaaa", 20), /*replace=*/false);
    save_run_steps(resumed, "aaaa", {25});
    CHECK(checkpoint_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000025.mddp", "ckpt-step-000000030.mddp"});
  }

  TEST_CASE("a resume from an older checkpoint refuses its own later ones unless replacing") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    store.claim("aaaa", std::nullopt, /*replace=*/false);
    save_run_steps(store, "aaaa", {10, 20, 30});

    CheckpointStore older(dir.path(), /*keep_last=*/3);
    const std::string message = error_message<UsageError>(
        [&] { older.claim("aaaa", resumed_at("aaaa", 10), /*replace=*/false); });
    INFO("message: ", message);
    CHECK(contains(message, "written after step 10"));
    CHECK(contains(message, dir.file("ckpt-step-000000030.mddp") + " and 1 more"));

    older.claim("aaaa", resumed_at("aaaa", 10), /*replace=*/true);
    save_run_steps(older, "aaaa", {15});
    CHECK(checkpoint_names(dir.path()) ==
          std::set<std::string>{"ckpt-step-000000010.mddp", "ckpt-step-000000015.mddp"});
  }

  TEST_CASE("a resumed run refuses a folder that also holds another run's checkpoints") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    store.claim("aaaa", std::nullopt, /*replace=*/false);
    save_run_steps(store, "aaaa", {7});
    TempDir elsewhere;
    CheckpointStore other(elsewhere.path(), /*keep_last=*/3);
    other.claim("bbbb", std::nullopt, /*replace=*/false);
    save_run_steps(other, "bbbb", {3});
    for (const char* name : {"ckpt-step-000000003.mddp", "ckpt-step-000000003.json"}) {
      fs::copy_file(elsewhere.file(name), dir.file(name));
    }
    const std::string message = error_message<UsageError>(
        [&] { store.claim("aaaa", resumed_at("aaaa", 7), /*replace=*/false); });
    INFO("message: ", message);
    CHECK(contains(message, "another run's"));
    CHECK(contains(message, dir.file("ckpt-step-000000003.mddp")));
  }

  TEST_CASE("a checkpoint named for another step than its header holds is damaged") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {10});
    store.save(20, checkpoint_bytes(10), manifest_for(20));
    const std::string warning = check_falls_back_to(store, dir.file("ckpt-step-000000010.mddp"),
                                                    "named for step 20 but holds step 10");
    CHECK(contains(warning, dir.file("ckpt-step-000000020.mddp")));
    for (const char* name : {"ckpt-step-000000020.mddp", "ckpt-step-000000020.json"}) {
      CAPTURE(name);
      const std::string message =
          error_message<CheckpointError>([&] { read_checkpoint(dir.file(name)); });
      CHECK(contains(message, "named for step 20 but holds step 10"));
    }
  }

  TEST_CASE("a manifest nested too deep is damaged, however deep") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2});
    const std::string manifest_path = dir.file("ckpt-step-000000002.json");
    for (std::size_t depth : {std::size_t{17}, std::size_t{20000}}) {
      CAPTURE(depth);
      write_bytes(manifest_path,
                  "{\"bytes\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
      check_falls_back_to(store, dir.file("ckpt-step-000000001.mddp"), "nested deeper than");
    }
  }

  TEST_CASE("only a regular file within the size bound is read") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {1, 2});
    const std::string file = dir.file("ckpt-step-000000002.mddp");
    fs::remove(file);
    fs::create_symlink("/dev/zero", file);
    check_falls_back_to(store, dir.file("ckpt-step-000000001.mddp"), "not a regular file");
    CHECK(contains(error_message<CheckpointError>([&] { read_checkpoint(file); }),
                   "'" + file + "' is not a regular file"));
    CHECK(contains(error_message<CheckpointError>([&] { read_checkpoint(dir.path()); }),
                   "not a regular file"));

    const std::string huge = dir.file("huge.mddp");
    write_bytes(huge, "");
    fs::resize_file(huge, checkpoint::kMaxCheckpointBytes + 1);  // sparse: no disk, no memory
    CHECK(contains(error_message<CheckpointError>([&] { read_checkpoint(huge); }),
                   "over the " + std::to_string(checkpoint::kMaxCheckpointBytes) + " allowed"));
  }
}

TEST_SUITE("read_checkpoint") {
  TEST_CASE("reads a checkpoint by its .mddp path or by its manifest") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
    save_steps(store, {4});
    const std::string file = dir.file("ckpt-step-000000004.mddp");

    const StoredCheckpoint direct = read_checkpoint(file);
    CHECK(direct.path == file);
    CHECK(direct.bytes == checkpoint_bytes(4));
    // Decoded as it was read, header and tensors, so a resume need not decode it again.
    CHECK(direct.meta.progress.step == 4);
    REQUIRE(direct.contents.tensors.size() == 1);
    CHECK(direct.contents.tensors[0].second.equal(at::full({3}, 4.0, at::kFloat)));

    const StoredCheckpoint through_manifest = read_checkpoint(dir.file("ckpt-step-000000004.json"));
    CHECK(through_manifest.path == file);
    CHECK(through_manifest.bytes == checkpoint_bytes(4));
  }

  TEST_CASE("a manifest whose checkpoint is damaged is refused naming the checkpoint") {
    TempDir dir;
    CheckpointStore store(dir.path(), /*keep_last=*/3);
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
