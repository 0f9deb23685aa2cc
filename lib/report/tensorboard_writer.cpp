// lib/report/tensorboard_writer.cpp — protobuf Events as TFRecords, framed byte by byte.
#include "report/tensorboard_writer.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>
#include <boost/crc.hpp>

#include "common/error.hpp"
#include "report/proto/event.pb.h"

namespace mnist_ddp::report {
namespace {

// TensorBoard loads a folder's files whose names hold "tfevents", in name order.
constexpr const char* kFilePrefix = "events.out.tfevents.";
// The version TensorFlow 2 and PyTorch's SummaryWriter write first.
constexpr const char* kFileVersion = "brain.Event:2";
// More writers than this in one folder within one second is a bug, not a busy run.
constexpr int kMaxSuffix = 1000;

/// Appends the `count` low bytes of `value`, least significant first.
void append_little_endian(std::string& out, std::uint64_t value, int count) {
  for (int i = 0; i < count; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

double seconds_since_epoch() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

std::string host_name() {
  std::array<char, 256> name{};  // HOST_NAME_MAX is 64 on Linux; the last byte stays NUL
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return name.data();
}

/// Creates the first free one of `base`, `base.1`, `base.2`, ... and returns its descriptor.
int create_new_file(const std::string& base, std::string& path) {
  for (int suffix = 0; suffix < kMaxSuffix; ++suffix) {
    path = suffix == 0 ? base : base + "." + std::to_string(suffix);
    // O_EXCL: no concurrent writer or planted link shares the file; 0666: the umask decides.
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      throw UsageError("cannot create the TensorBoard event file '" + path +
                       "': " + std::strerror(errno));
    }
  }
  throw UsageError("cannot create the TensorBoard event file '" + base + "': it and " +
                   std::to_string(kMaxSuffix - 1) + " suffixed names exist already");
}

/// Writes all of `bytes`, once per record: TensorBoard, polling the file, rarely sees half of one.
void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error(ExitCode::kFailure, "writing the TensorBoard event file '" + path +
                                          "' failed: " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

std::uint32_t crc32c(std::string_view bytes) {
  // Polynomial 0x1EDC6F41, initial value and final xor all ones, input and output reflected.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  // TensorFlow's mask (lib/hash/crc32c.h): a CRC over data holding CRCs is weak.
  const std::uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord_frame(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  append_little_endian(record, data.size(), 8);
  append_little_endian(record, masked_crc32c(record), 4);  // of the 8 length bytes only
  record.append(data);
  append_little_endian(record, masked_crc32c(data), 4);
  return record;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  if (dir.empty()) throw UsageError("the TensorBoard folder name is empty");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw UsageError("cannot create the TensorBoard folder '" + dir + "': " + error.message());
  }
  const double now = seconds_since_epoch();
  const std::string base = (std::filesystem::path(dir) / kFilePrefix).string() +
                           std::to_string(static_cast<std::int64_t>(now)) + "." + host_name();
  fd_ = create_new_file(base, path_);

  tensorboard::Event event;
  event.set_wall_time(now);
  event.set_file_version(kFileVersion);
  try {
    write_all(fd_, tfrecord_frame(event.SerializeAsString()), path_);
  } catch (...) {
    // The destructor does not run for a constructor that throws.
    close(fd_);
    throw;
  }
}

TensorBoardWriter::~TensorBoardWriter() {
  fsync(fd_);
  close(fd_);
}

void TensorBoardWriter::add_scalar(const std::string& tag, std::int64_t step, double value,
                                   std::optional<double> wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time ? *wall_time : seconds_since_epoch());
  event.set_step(step);
  tensorboard::Summary::Value* scalar = event.mutable_summary()->add_value();
  scalar->set_tag(tag);
  scalar->set_simple_value(static_cast<float>(value));
  write_all(fd_, tfrecord_frame(event.SerializeAsString()), path_);
}

void TensorBoardWriter::flush() {
  if (fsync(fd_) != 0) {
    throw Error(ExitCode::kFailure, "syncing the TensorBoard event file '" + path_ +
                                        "' failed: " + std::strerror(errno));
  }
}

}  // namespace mnist_ddp::report
