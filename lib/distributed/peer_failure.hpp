// lib/distributed/peer_failure.hpp — provides: PeerFailureWatch, over which a rank whose part of a
// polled set-up step failed tells the other ranks at once, and poll_until(done_yet, timeout,
// watch), the polled wait that gives up as soon as a peer announced a failure.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mnist_ddp::distributed {

/// Note [Set-up failure is agreed while polling]. Some set-up steps are collective but polled
/// locally (NCCL's non-blocking initialisation): when one rank's part fails at once, the others
/// would poll on until the timeout (--comm-timeout, 300 s by default) before the agreement that
/// follows the step (throw_unless_all_succeeded, run_agreed) could tell them. So the step is
/// watched. A rank whose part fails announces it to every other rank before it cleans up
/// (aborting NCCL can take seconds), and a rank that polls gives up as soon as an announcement
/// arrives, with an error naming the failed rank and its reason; the agreement afterwards still
/// decides the exit code. A rank that fails after a peer's announcement arrived reports the
/// peer's failure, of which its own is likely an echo, and announces nothing more.
///
/// Nothing here ever waits for another rank after the constructor: an announcement is one short
/// MPI_Isend per peer (at most kMaxReasonBytes, below Open MPI's eager limits) on a duplicate of
/// the step's communicator, so it matches no other message, and a peer that stopped watching
/// never receives it. The destructor therefore leaves a failure's traces to the process's end:
/// sends not complete yet are freed with their buffer kept, and the duplicate is not freed once
/// this rank announced or heard a failure, because the next MPI_Comm_dup may reuse a freed
/// context id and a late announcement would then arrive in that communicator (with Open MPI
/// 4.1, freeing it regardless let a stale announcement into the next watch at 4 ranks in 3 runs
/// out of 3; tests/mpi/test_peer_failure.cpp). Without a failure nothing was sent and the
/// duplicate is freed.

/// A failure that another rank announced.
struct PeerFailure {
  int rank = 0;        // the rank that failed, in the watched communicator
  std::string reason;  // what it said went wrong
};

/// The announcements of one polled set-up step (Note [Set-up failure is agreed while polling]).
class PeerFailureWatch {
 public:
  /// The longest reason sent; longer ones are cut.
  static constexpr std::size_t kMaxReasonBytes = 1024;

  /// Collective over `comm`: every rank constructs it (it duplicates `comm`).
  explicit PeerFailureWatch(MPI_Comm comm);
  /// Never waits for another rank (see the Note for what a failure leaves behind).
  ~PeerFailureWatch();
  PeerFailureWatch(const PeerFailureWatch&) = delete;
  PeerFailureWatch& operator=(const PeerFailureWatch&) = delete;

  /// Tells every other rank that this one failed because of `reason`, and returns at once. Only
  /// the first call sends, and none after a peer's failure was heard (every rank hears that one
  /// too). Best effort, as it runs on the way to reporting a failure: an MPI error leaves that
  /// peer to its timeout and the agreement after the step.
  void announce(const std::string& reason) noexcept;

  /// The first failure a peer announced, once it has arrived (and from then on); never waits.
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

/// How a poll watched for peers' failures ended; neither done nor a peer's failure: timed out.
struct WatchedPoll {
  bool done = false;                        // `done_yet` returned true
  std::optional<PeerFailure> peer_failure;  // a peer announced a failure before that
};

/// poll_until(done_yet, timeout_seconds) that also gives up as soon as a peer's failure arrives
/// through `peers`. A local operation that is done wins over an announcement heard at that time.
WatchedPoll poll_until(const std::function<bool()>& done_yet, double timeout_seconds,
                       PeerFailureWatch& peers);

}  // namespace mnist_ddp::distributed
