// lib/distributed/peer_failure.hpp — provides: PeerFailureWatch, poll_until that heeds it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mnist_ddp::distributed {

/// Note [Set-up failure is agreed while polling]. In a locally polled step (NCCL's non-blocking
/// init) peers of a failed rank would poll until --comm-timeout. So a failed rank announces it to
/// every peer before cleaning up (aborting NCCL takes seconds), pollers give up on an announcement,
/// and the agreement after the step still decides the exit code. A rank that fails after hearing
/// one reports the peer's (its own is likely an echo) and announces nothing. An announcement is one
/// short MPI_Isend per peer on a duplicate communicator, which a failure never frees: a reused
/// context id would receive a late announcement.

struct PeerFailure {
  int rank = 0;        // the rank that failed, in the watched communicator
  std::string reason;  // what it said went wrong
};

/// One polled set-up step's announcements (Note [Set-up failure is agreed while polling]).
class PeerFailureWatch {
 public:
  /// Longer reasons are cut.
  static constexpr std::size_t kMaxReasonBytes = 1024;

  /// Collective: duplicates `comm`.
  explicit PeerFailureWatch(MPI_Comm comm);
  /// Never waits for another rank.
  ~PeerFailureWatch();
  PeerFailureWatch(const PeerFailureWatch&) = delete;
  PeerFailureWatch& operator=(const PeerFailureWatch&) = delete;

  /// Best effort, returns at once; only the first call sends, none after hearing a peer's failure.
  void announce(const std::string& reason) noexcept;

  /// The first failure a peer announced, once arrived; never waits.
  std::optional<PeerFailure> check();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;  // the duplicate that carries announcements only
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<const std::string> message_;  // what announce() sends; read by MPI until sent
  std::vector<MPI_Request> sends_;              // one per peer, once announced
  bool announced_ = false;
  std::optional<PeerFailure> heard_;
};

/// Neither done nor a peer's failure: timed out.
struct WatchedPoll {
  bool done = false;                        // `done_yet` returned true
  std::optional<PeerFailure> peer_failure;  // a peer announced a failure before that
};

/// poll_until that also stops on a peer's failure; being done wins over a simultaneous one.
WatchedPoll poll_until(const std::function<bool()>& done_yet, double timeout_seconds,
                       PeerFailureWatch& peers);

}  // namespace mnist_ddp::distributed
