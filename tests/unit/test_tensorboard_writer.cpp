// tests/unit/test_tensorboard_writer.cpp — TensorBoardWriter and its TFRecord framing: the file
// name TensorBoard looks for, lengths and masked CRC-32Cs checked by a CRC written here, records
// decoded by the generated classes (file_version first, then the scalars in order), no file
// overwritten, the mode from the umask, and UsageErrors that name the folder.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>
#include <unistd.h>

#include "common/error.hpp"
#include "report/tensorboard_writer.hpp"
#include "support/event_decoder.hpp"
#include "support/file_modes.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using report::TensorBoardWriter;

// Spelled out here, from TensorFlow's record_writer.cc, so the tests do not trust the code they
// test: uint64 length, uint32 masked CRC of the length, data, uint32 masked CRC of the data.
constexpr std::size_t kHeaderBytes = 12;
constexpr std::size_t kFooterBytes = 4;

/// CRC-32C bit by bit (reflected polynomial 0x82F63B78), independent of Boost's tables.
std::uint32_t reference_crc32c(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::uint32_t reference_mask(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// The little-endian unsigned integer in bytes [at, at + count) of `bytes`.
std::uint64_t little_endian_at(const std::string& bytes, std::size_t at, std::size_t count) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    value |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  }
  return value;
}

/// Splits a TFRecord file into the data of its records, checking every length and CRC.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < file.size()) {
    INFO("record ", records.size(), " at byte ", at);
    REQUIRE(file.size() - at >= kHeaderBytes + kFooterBytes);
    const std::uint64_t length = little_endian_at(file, at, 8);
    CHECK(little_endian_at(file, at + 8, 4) ==
          reference_mask(reference_crc32c(file.substr(at, 8))));
    REQUIRE(length <= file.size() - at - kHeaderBytes - kFooterBytes);
    const std::string data = file.substr(at + kHeaderBytes, length);
    CHECK(little_endian_at(file, at + kHeaderBytes + length, 4) ==
          reference_mask(reference_crc32c(data)));
    records.push_back(data);
    at += kHeaderBytes + length + kFooterBytes;
  }
  return records;
}

/// Every event of the file at `path`, decoded.
std::vector<DecodedEvent> read_events(const std::string& path) {
  std::vector<DecodedEvent> events;
  for (const std::string& data : read_records(read_bytes(path))) {
    events.push_back(decode_event(data));
  }
  return events;
}

/// The paths of everything in `folder`.
std::vector<std::string> folder_paths(const std::string& folder) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    paths.push_back(entry.path().string());
  }
  return paths;
}

double now_seconds() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

std::string this_host() {
  std::string name(256, '\0');
  REQUIRE(gethostname(name.data(), name.size() - 1) == 0);
  return name.c_str();
}

/// Checks one decoded scalar event.
void check_scalar(const DecodedEvent& event, const std::string& tag, std::int64_t step,
                  float value) {
  INFO("tag ", tag, ", step ", step);
  CHECK(event.kind == "summary");
  CHECK(event.step == step);
  REQUIRE(event.values.size() == 1);
  CHECK(event.values[0].tag == tag);
  CHECK(event.values[0].has_simple_value);
  CHECK(event.values[0].simple_value == value);
}

}  // namespace

TEST_SUITE("TensorBoardWriter") {
  TEST_CASE("tensorboard: CRC-32C and its mask agree with the reference values") {
    // The CRC-32C check value, and RFC 3720's test vectors (B.4).
    CHECK(reference_crc32c("123456789") == 0xE3069283u);
    CHECK(report::crc32c("123456789") == 0xE3069283u);
    CHECK(report::crc32c(std::string(32, '\0')) == 0x8A9136AAu);
    CHECK(report::crc32c(std::string(32, '\xff')) == 0x62A8AB43u);
    std::string ascending;
    for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
    CHECK(report::crc32c(ascending) == 0x46DD794Eu);
    CHECK(report::crc32c("") == 0u);
    CHECK(report::masked_crc32c("") == 0xa282ead8u);
    CHECK(report::masked_crc32c("123456789") == reference_mask(0xE3069283u));
  }

  TEST_CASE("tensorboard: tfrecord_frame lays out length, masked CRCs and data") {
    const std::string data("a\0b", 3);
    const std::string record = report::tfrecord_frame(data);
    REQUIRE(record.size() == kHeaderBytes + data.size() + kFooterBytes);
    CHECK(record.substr(0, 8) == std::string("\x03\0\0\0\0\0\0\0", 8));
    CHECK(little_endian_at(record, 8, 4) == reference_mask(reference_crc32c(record.substr(0, 8))));
    CHECK(record.substr(kHeaderBytes, data.size()) == data);
    CHECK(little_endian_at(record, kHeaderBytes + data.size(), 4) ==
          reference_mask(reference_crc32c(data)));
    CHECK(read_records(report::tfrecord_frame("")) == std::vector<std::string>{""});
  }

  TEST_CASE("tensorboard: the file is named for TensorBoard and holds file_version, then scalars") {
    TempDir dir;
    const std::string folder = dir.file("runs/exp1");  // parents are created too
    const double before = now_seconds();
    std::string path;
    {
      TensorBoardWriter writer(folder);
      path = writer.path();
      writer.add_scalar("train/loss", 0, 2.5, /*wall_time=*/1000.25);
      writer.add_scalar("train/loss", 1, 0.0, /*wall_time=*/1001.5);  // zero is written too
      writer.add_scalar("test/accuracy", 5'000'000'000, 0.1, /*wall_time=*/1002.0);
      writer.add_scalar("train/lr", 7, -1.75);  // stamped with the current time
    }
    const double after = now_seconds();

    REQUIRE(folder_paths(folder) == std::vector<std::string>{path});
    const std::string name = std::filesystem::path(path).filename().string();
    const std::string prefix = "events.out.tfevents.";
    const std::string host_suffix = "." + this_host();
    REQUIRE(name.rfind(prefix, 0) == 0);
    REQUIRE(name.size() > prefix.size() + host_suffix.size());
    CHECK(name.compare(name.size() - host_suffix.size(), host_suffix.size(), host_suffix) == 0);
    const std::string seconds =
        name.substr(prefix.size(), name.size() - prefix.size() - host_suffix.size());
    INFO("file name ", name);
    CHECK(std::stoll(seconds) >= static_cast<long long>(before));
    CHECK(std::stoll(seconds) <= static_cast<long long>(after));

    const std::vector<DecodedEvent> events = read_events(path);
    REQUIRE(events.size() == 5);
    CHECK(events[0].kind == "file_version");
    CHECK(events[0].file_version == "brain.Event:2");
    CHECK(events[0].step == 0);
    CHECK(events[0].wall_time >= before);
    CHECK(events[0].wall_time <= after);

    check_scalar(events[1], "train/loss", 0, 2.5f);
    CHECK(events[1].wall_time == 1000.25);
    check_scalar(events[2], "train/loss", 1, 0.0f);
    CHECK(events[2].wall_time == 1001.5);
    check_scalar(events[3], "test/accuracy", 5'000'000'000, static_cast<float>(0.1));
    CHECK(events[3].wall_time == 1002.0);
    check_scalar(events[4], "train/lr", 7, -1.75f);
    CHECK(events[4].wall_time >= before);
    CHECK(events[4].wall_time <= after);
  }

  TEST_CASE("tensorboard: records reach the file as they are added, before flush()") {
    TempDir dir;
    TensorBoardWriter writer(dir.path());
    CHECK(read_events(writer.path()).size() == 1);
    writer.add_scalar("train/loss", 3, 0.25);
    const std::vector<DecodedEvent> events = read_events(writer.path());
    REQUIRE(events.size() == 2);
    check_scalar(events[1], "train/loss", 3, 0.25f);
    CHECK_NOTHROW(writer.flush());
    CHECK(read_events(writer.path()).size() == 2);
  }

  TEST_CASE("tensorboard: a new writer never overwrites an existing event file") {
    TempDir dir;
    // Take the plain names of the next minute, so the writer must pick a suffixed one.
    const auto start = static_cast<long long>(now_seconds());
    const std::string host = this_host();
    for (long long second = start; second <= start + 60; ++second) {
      std::ofstream(dir.file("events.out.tfevents." + std::to_string(second) + "." + host))
          << "taken";
    }
    std::string first_path;
    std::string second_path;
    {
      TensorBoardWriter first(dir.path());
      TensorBoardWriter second(dir.path());
      first_path = first.path();
      second_path = second.path();
      first.add_scalar("run", 1, 1.0);
      second.add_scalar("run", 2, 2.0);
    }
    INFO("first ", first_path, ", second ", second_path);
    CHECK(first_path != second_path);
    // ".2" unless the clock moved on to the next second between the two.
    CHECK(first_path.substr(first_path.size() - 2) == ".1");
    const std::string second_suffix = second_path.substr(second_path.size() - 2);
    CHECK((second_suffix == ".2" || second_suffix == ".1"));
    for (const std::string& path : folder_paths(dir.path())) {
      if (path != first_path && path != second_path) CHECK(read_bytes(path) == "taken");
    }
    const std::vector<DecodedEvent> first_events = read_events(first_path);
    const std::vector<DecodedEvent> second_events = read_events(second_path);
    REQUIRE(first_events.size() == 2);
    REQUIRE(second_events.size() == 2);
    check_scalar(first_events[1], "run", 1, 1.0f);
    check_scalar(second_events[1], "run", 2, 2.0f);
  }

  TEST_CASE("tensorboard: the event file gets mode 0666 less the umask") {
    TempDir dir;
    for (const UmaskCase& c : umask_cases()) {
      INFO(c.name);
      const ScopedUmask scoped(c.mask);
      const TensorBoardWriter writer(dir.path());
      CHECK(permissions(writer.path()) == c.mode);
    }
  }

  TEST_CASE("tensorboard: a folder that cannot be created is a UsageError naming it") {
    TempDir dir;
    const std::string plain = dir.file("plain");
    std::ofstream(plain) << "a regular file";

    const std::string under = plain + "/runs";
    std::string message = error_message<UsageError>([&] { TensorBoardWriter writer(under); });
    INFO("message: ", message);
    CHECK(contains(message, "'" + under + "'"));
    CHECK(contains(message, "Not a directory"));

    message = error_message<UsageError>([&] { TensorBoardWriter writer(plain); });
    CHECK(contains(message, "'" + plain + "'"));

    message = error_message<UsageError>([&] { TensorBoardWriter writer(""); });
    CHECK(contains(message, "TensorBoard folder"));
    CHECK(read_bytes(plain) == "a regular file");
  }
}

}  // namespace mnist_ddp::testing
