// lib/distributed/peer_failure.cpp — failure announcements as MPI_Isends on a duplicate.
#include "distributed/peer_failure.hpp"

#include <utility>

#include "distributed/mpi_watchdog.hpp"
#include "distributed/poll_wait.hpp"

namespace mnist_ddp::distributed {
namespace {

// Announcements are the only messages on the duplicate; the tag just names them.
constexpr int kAnnounceTag = 1;

}  // namespace

PeerFailureWatch::PeerFailureWatch(MPI_Comm comm) {
  MDDP_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  MDDP_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MDDP_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

PeerFailureWatch::~PeerFailureWatch() {
  // Failures cannot be reported from here; what is left goes with the process.
  int all_sent = 1;
  if (!sends_.empty()) {
    MPI_Testall(static_cast<int>(sends_.size()), sends_.data(), &all_sent, MPI_STATUSES_IGNORE);
  }
  if (!all_sent) {
    for (MPI_Request& send : sends_) {
      if (send != MPI_REQUEST_NULL) MPI_Request_free(&send);
    }
    keep_until_exit(std::move(message_));  // MPI may still read it
  }
  // Kept after a failure (Note [Set-up failure is agreed while polling]).
  if (announced_ || heard_) return;
  MPI_Comm_free(&comm_);
}

void PeerFailureWatch::announce(const std::string& reason) noexcept {
  if (announced_ || heard_) return;
  announced_ = true;
  message_ = std::make_unique<const std::string>(reason.substr(0, kMaxReasonBytes));
  sends_.assign(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  // The sender is the envelope's source; the message is the reason alone.
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    if (MPI_Isend(message_->data(), static_cast<int>(message_->size()), MPI_CHAR, peer,
                  kAnnounceTag, comm_, &sends_[peer]) != MPI_SUCCESS) {
      sends_[peer] = MPI_REQUEST_NULL;
    }
  }
}

std::optional<PeerFailure> PeerFailureWatch::check() {
  if (heard_) return heard_;
  int arrived = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  MDDP_MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, kAnnounceTag, comm_, &arrived, &message, &status));
  if (!arrived) return std::nullopt;
  int length = 0;
  MDDP_MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &length));
  std::string reason(static_cast<std::size_t>(length), '\0');
  MDDP_MPI_CHECK(MPI_Mrecv(reason.data(), length, MPI_CHAR, &message, MPI_STATUS_IGNORE));
  heard_ = PeerFailure{status.MPI_SOURCE, std::move(reason)};
  return heard_;
}

WatchedPoll poll_until(const std::function<bool()>& done_yet, double timeout_seconds,
                       PeerFailureWatch& peers) {
  WatchedPoll outcome;
  poll_until(
      [&] {
        outcome.done = done_yet();
        if (!outcome.done) outcome.peer_failure = peers.check();
        return outcome.done || outcome.peer_failure.has_value();
      },
      timeout_seconds);
  return outcome;
}

}  // namespace mnist_ddp::distributed
