// lib/distributed/mpi_watchdog.hpp — provides: MpiWatchdog, which waits for collectives with a
// deadline and, when one is missed, names the collective and the ranks that had not joined it (as
// Horovod's stall inspector and PyTorch's NCCL watchdog do), so a stalled or lost rank ends the job
// instead of leaving the others waiting forever.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace mnist_ddp::distributed {

/// What a watched wait throws at its timeout: a rank is stalled, so it would not join an
/// agreement either, and the job ends.
struct CommTimeout : CommError {
  using CommError::CommError;
};

/// Note [Stall diagnosis]. Every rank counts the collectives it starts on the watched
/// communicator. While waiting, a rank answers status queries on a communicator of its own (a
/// duplicate, so they never mix with training traffic). A rank whose wait passes the timeout
/// asks every other rank for its count and waits a short grace period for the answers: a rank
/// with a lower count had not joined yet; a rank that does not answer is stalled, dead or busy
/// outside communication. The collective named, and those ranks, go into the CommTimeout. A
/// query's answer is received into the watchdog, not into the diagnosis, because it may arrive
/// after the diagnosis gave up; a rank whose answer is still outstanding is not asked again, and
/// its answer, when it comes, is its count at that time.
class MpiWatchdog {
 public:
  /// Watches collectives on `comm` (every rank must construct it: it duplicates `comm` and
  /// gathers every rank's host name, for the diagnosis).
  MpiWatchdog(MPI_Comm comm, double timeout_seconds);
  /// Withdraws the queries whose answers never came.
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  void set_timeout(double seconds) { timeout_seconds_ = seconds; }
  /// The watched communicator.
  MPI_Comm comm() const { return comm_; }

  /// Call when a collective is started on the watched communicator; returns its number.
  std::int64_t started() { return ++started_; }

  /// Tests `request` once (answering queries); true when it is complete.
  bool test(MPI_Request& request);

  /// Waits for `request`, the collective numbered `number` named `what`. Throws CommTimeout when
  /// it is not done after the timeout, keeping `buffers` (the collective's, which a late rank may
  /// still complete) until the process ends.
  void wait(MPI_Request& request, std::int64_t number, const std::string& what,
            std::shared_ptr<const void> buffers = nullptr);
  /// wait() for a collective just started on comm().
  void wait(MPI_Request& request, const std::string& what,
            std::shared_ptr<const void> buffers = nullptr) {
    wait(request, started(), what, std::move(buffers));
  }

 private:
  /// Replies to every status query that has arrived.
  void answer_queries();
  /// The ranks that had not joined collective `number`, as text for the error.
  std::string diagnose(std::int64_t number);

  /// The answer to this rank's status query to one peer.
  struct Answer {
    std::int64_t started = 0;                // the peer's count, once received
    MPI_Request receive = MPI_REQUEST_NULL;  // while the answer is outstanding
  };

  MPI_Comm comm_;
  MPI_Comm status_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double timeout_seconds_;
  std::int64_t started_ = 0;        // collectives started by this rank
  std::vector<std::string> hosts_;  // of every rank of the communicator
  std::vector<Answer> answers_;     // per peer
};

/// The diagnosis of Note [Stall diagnosis], as text for the error of rank `rank`, which waits for
/// collective `number`: `started[r]` is the count of collectives rank r had started, or nullopt
/// when r did not answer; `hosts`, every rank's host (or empty). "rank 0 waits for rank(s) 2@gpu03
/// not responding ...; rank(s) 1@gpu02 (at #4) had not joined".
std::string describe_stall(int rank, std::int64_t number,
                           const std::vector<std::optional<std::int64_t>>& started,
                           const std::vector<std::string>& hosts = {});

}  // namespace mnist_ddp::distributed
