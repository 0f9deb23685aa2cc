// lib/report/tensorboard_writer.hpp — provides: TensorBoardWriter (scalars to an event file);
// crc32c, masked_crc32c, tfrecord_frame: TFRecord framing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mnist_ddp::report {

/// CRC-32C (Castagnoli, reflected, as in iSCSI and ext4): crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::string_view bytes);

/// The CRC-32C of `bytes` as TFRecord stores it: rotated right by 15 bits plus 0xa282ead8.
std::uint32_t masked_crc32c(std::string_view bytes);

/// `data` as a TFRecord: uint64 length, its masked CRC, data, the data's masked CRC; little-endian.
std::string tfrecord_frame(std::string_view data);

/// One new event file, for rank 0 alone; not thread-safe. Each record is write()n unbuffered, so
/// TensorBoard shows it at once and a killed process loses nothing; flush() fsyncs.
class TensorBoardWriter {
 public:
  /// Creates `dir` and a new events.out.tfevents.<unix seconds>.<host>[.N] in it, never
  /// overwriting one, starting with the file_version record. Throws UsageError naming the path.
  explicit TensorBoardWriter(const std::string& dir);
  /// Flushes and closes, ignoring errors: a destructor must not throw.
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  /// Writes scalar `tag` at `step` as a float, at `wall_time` (Unix seconds; default now); throws.
  void add_scalar(const std::string& tag, std::int64_t step, double value,
                  std::optional<double> wall_time = std::nullopt);

  /// fsync: the records so far survive a machine crash. Throws Error naming the file on failure.
  void flush();

  /// The event file being written.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace mnist_ddp::report
