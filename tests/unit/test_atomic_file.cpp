// tests/unit/test_atomic_file.cpp — write_file_atomically: exact contents, replacement of an
// existing file, mode from the umask, no temporary file left behind, and errors that name the path.
#include <filesystem>
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "support/file_modes.hpp"
#include "support/folder_names.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

/// Makes `folder` the current folder for the lifetime of the object.
class ScopedCurrentPath {
 public:
  explicit ScopedCurrentPath(const std::string& folder)
      : previous_(std::filesystem::current_path()) {
    std::filesystem::current_path(folder);
  }
  ~ScopedCurrentPath() {
    std::error_code ignored;
    std::filesystem::current_path(previous_, ignored);
  }
  ScopedCurrentPath(const ScopedCurrentPath&) = delete;
  ScopedCurrentPath& operator=(const ScopedCurrentPath&) = delete;

 private:
  std::filesystem::path previous_;
};

/// Every byte value, NUL included, so no text-mode or C-string handling goes unnoticed.
std::string all_byte_values() {
  const Bytes bytes = pattern_bytes(1000);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

TEST_SUITE("write_file_atomically") {
  TEST_CASE("writes the contents byte for byte") {
    TempDir dir;
    const std::string contents = all_byte_values();
    write_file_atomically(dir.file("data.bin"), contents);
    CHECK(read_bytes(dir.file("data.bin")) == contents);

    write_file_atomically(dir.file("empty"), "");
    CHECK(std::filesystem::file_size(dir.file("empty")) == 0);

    // A large file takes several write() calls on some systems.
    const std::string large(5 << 20, 'x');
    write_file_atomically(dir.file("large"), large);
    CHECK(read_bytes(dir.file("large")) == large);
  }

  TEST_CASE("replaces an existing file, longer or shorter") {
    TempDir dir;
    const std::string path = dir.file("state.json");
    write_file_atomically(path, "the old contents, longer than the new ones");
    write_file_atomically(path, "new");
    CHECK(read_bytes(path) == "new");
    write_file_atomically(path, "newer and longer than before");
    CHECK(read_bytes(path) == "newer and longer than before");
  }

  TEST_CASE("the file gets mode 0666 less the umask, also when it replaces a file") {
    TempDir dir;
    const std::string path = dir.file("checkpoint");
    for (const UmaskCase& c : umask_cases()) {
      INFO(c.name);
      ScopedUmask scoped(c.mask);
      write_file_atomically(path, "new");
      CHECK(permissions(path) == c.mode);
      CHECK(folder_names(dir.path()) == std::set<std::string>{"checkpoint"});
    }
  }

  TEST_CASE("no temporary file is left in the folder") {
    TempDir dir;
    write_file_atomically(dir.file("a"), "1");
    write_file_atomically(dir.file("a"), "2");
    write_file_atomically(dir.file("b"), "3");
    CHECK(folder_names(dir.path()) == std::set<std::string>{"a", "b"});
  }

  TEST_CASE("a relative path is written in the current folder") {
    TempDir dir;
    {
      ScopedCurrentPath inside(dir.path());
      write_file_atomically("relative.txt", "here");
    }
    CHECK(read_bytes(dir.file("relative.txt")) == "here");
    CHECK(folder_names(dir.path()) == std::set<std::string>{"relative.txt"});
  }

  TEST_CASE("writing into a missing folder is an Error naming the path") {
    TempDir dir;
    const std::string folder = dir.file("missing");
    const std::string path = folder + "/ckpt.mddp";
    const std::string message = error_message<Error>([&] { write_file_atomically(path, "x"); });
    INFO("message: ", message);
    // The file is created first as a temporary beside the target, so the message may name that
    // one; it must still show the folder and the file name.
    CHECK(contains(message, folder + "/"));
    CHECK(contains(message, "ckpt.mddp"));
    CHECK(contains(message, "No such file or directory"));
    CHECK_FALSE(std::filesystem::exists(folder));
  }

  TEST_CASE("a failed rename names the path and leaves no temporary file") {
    TempDir dir;
    // rename() cannot put a file over a folder that holds something.
    const std::string path = dir.file("taken");
    std::filesystem::create_directory(path);
    write_file_atomically(path + "/inside", "keeps the folder non-empty");
    const std::string message = error_message<Error>([&] { write_file_atomically(path, "x"); });
    INFO("message: ", message);
    CHECK(contains(message, "'" + path + "'"));
    CHECK(folder_names(dir.path()) == std::set<std::string>{"taken"});
    CHECK(std::filesystem::is_directory(path));
  }
}

}  // namespace mnist_ddp::testing
