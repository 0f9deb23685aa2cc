// lib/report/tensorboard_writer.hpp — provides: TensorBoardWriter (scalars to an event file).
#pragma once

#include <cstdint>
#include <string>

namespace mnist_ddp::report {

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

  /// Writes scalar `tag` at `step`, now, rounded to TensorBoard's float; throws Error on failure.
  void add_scalar(const std::string& tag, std::int64_t step, double value);
  /// The same with an explicit `wall_time`, in seconds since the Unix epoch.
  void add_scalar(const std::string& tag, std::int64_t step, double value, double wall_time);

  /// fsync: the records so far survive a machine crash. Throws Error naming the file on failure.
  void flush();

  /// The event file being written.
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);

  std::string path_;
  int fd_ = -1;
};

}  // namespace mnist_ddp::report
