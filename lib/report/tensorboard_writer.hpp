// lib/report/tensorboard_writer.hpp — provides: TensorBoardWriter, scalars written to a TensorBoard
// event file (events.out.tfevents.*) that TensorBoard reads, live or afterwards.
#pragma once

#include <cstdint>
#include <string>

namespace mnist_ddp::report {

/// One new event file in a folder; meant for rank 0 alone, and not thread-safe.
///
/// Each record goes to the operating system in one write() as soon as it is added, so a running
/// TensorBoard shows it at once and a killed process loses nothing it added. flush() also
/// fsyncs, for a crash of the whole machine; at a few hundred scalars per run, writing each one
/// costs nothing worth buffering for.
class TensorBoardWriter {
 public:
  /// Creates `dir` (and its parents) when missing, and in it a new file
  /// events.out.tfevents.<unix seconds>.<hostname>, with ".1", ".2", ... appended when that name
  /// is taken, so no file is ever overwritten, with mode 0666 less the umask; then writes the
  /// file_version record TensorBoard expects first. Throws UsageError naming the folder or file
  /// when it cannot create them.
  explicit TensorBoardWriter(const std::string& dir);
  /// Flushes and closes; errors are ignored here, since a destructor must not throw.
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  /// Writes `value` as scalar `tag` at `step`, stamped with the current time. TensorBoard keeps
  /// scalars as float, so `value` is rounded to float. Throws Error naming the file on failure.
  void add_scalar(const std::string& tag, std::int64_t step, double value);
  /// The same with an explicit `wall_time`, in seconds since the Unix epoch.
  void add_scalar(const std::string& tag, std::int64_t step, double value, double wall_time);

  /// Makes the records written so far survive a crash of the machine (fsync). Throws Error
  /// naming the file on failure.
  void flush();

  /// The event file being written.
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);

  std::string path_;
  int fd_ = -1;
};

}  // namespace mnist_ddp::report
