// lib/distributed/mpi_watchdog.cpp — deadline waits, Note [Stall diagnosis], MPI result checks.
#include "distributed/mpi_watchdog.hpp"

#include <array>
#include <mutex>

#include <unistd.h>

#include "distributed/poll_wait.hpp"

namespace mnist_ddp::distributed {
namespace {

constexpr int kQueryTag = 1;
constexpr int kReplyTag = 2;
// How long a rank that timed out waits for the others' answers.
constexpr double kGraceSeconds = 3;

}  // namespace

void check_mpi(int result, const char* expression, const char* file, int line) {
  if (result == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(result, text.data(), &length);
  throw CommError(std::string(expression) + " failed: " + std::string(text.data(), length) + " @ " +
                  file + ":" + std::to_string(line));
}

void keep_until_exit(std::shared_ptr<const void> buffer) {
  // Never destroyed, to outlive static destructors; reachable, so leak checkers stay quiet.
  static auto* const kept = new std::vector<std::shared_ptr<const void>>();
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(buffer));
}

MpiWatchdog::MpiWatchdog(MPI_Comm comm, double timeout_seconds)
    : comm_(comm), timeout_seconds_(timeout_seconds) {
  MDDP_MPI_CHECK(MPI_Comm_dup(comm, &status_comm_));
  MDDP_MPI_CHECK(MPI_Comm_rank(status_comm_, &rank_));
  MDDP_MPI_CHECK(MPI_Comm_size(status_comm_, &size_));
  std::array<char, 256> mine{};
  gethostname(mine.data(), mine.size() - 1);
  std::vector<std::array<char, 256>> all(size_);
  MDDP_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                               static_cast<int>(mine.size()), MPI_CHAR, status_comm_));
  for (const auto& host : all) hosts_.emplace_back(host.data());
  answers_.resize(size_);
}

MpiWatchdog::~MpiWatchdog() {
  // Cancelled, a receive completes at once: no late answer can reach the freed buffer.
  for (Answer& answer : answers_) {
    if (answer.receive == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&answer.receive);
    MPI_Wait(&answer.receive, MPI_STATUS_IGNORE);
  }
  if (status_comm_ != MPI_COMM_NULL) MPI_Comm_free(&status_comm_);
}

bool MpiWatchdog::test(MPI_Request& request) {
  int done = 0;
  MDDP_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
  if (!done) answer_queries();
  return done != 0;
}

void MpiWatchdog::wait(MPI_Request& request, std::int64_t number, const std::string& what,
                       std::shared_ptr<const void> buffers) {
  if (poll_until([&] { return test(request); }, timeout_seconds_)) return;
  if (buffers) keep_until_exit(std::move(buffers));
  throw CommTimeout(what + " (collective #" + std::to_string(number) + ") " +
                    stall_message(timeout_seconds_, diagnose(number)));
}

void MpiWatchdog::answer_queries() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MDDP_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, status_comm_, &arrived, &status));
    if (!arrived) return;
    MDDP_MPI_CHECK(MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kQueryTag, status_comm_,
                            MPI_STATUS_IGNORE));
    // Eight bytes go out eagerly: this send does not wait for the asking rank.
    MDDP_MPI_CHECK(MPI_Send(&started_, 1, MPI_INT64_T, status.MPI_SOURCE, kReplyTag, status_comm_));
  }
}

std::string MpiWatchdog::diagnose(std::int64_t number) {
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    Answer& answer = answers_[peer];
    // An answer from an earlier diagnosis is out of date: ask again; one outstanding is current.
    int out_of_date = 0;  // MPI_Test of a null request (never asked) finds it done at once
    MDDP_MPI_CHECK(MPI_Test(&answer.receive, &out_of_date, MPI_STATUS_IGNORE));
    if (answer.receive != MPI_REQUEST_NULL) continue;
    // The query carries no data, so nothing needs to outlive its send.
    MPI_Request query = MPI_REQUEST_NULL;
    MDDP_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, peer, kQueryTag, status_comm_, &query));
    MDDP_MPI_CHECK(MPI_Request_free(&query));
    MDDP_MPI_CHECK(
        MPI_Irecv(&answer.started, 1, MPI_INT64_T, peer, kReplyTag, status_comm_, &answer.receive));
  }
  std::vector<std::optional<std::int64_t>> joined(size_);
  joined[rank_] = number;
  int missing = size_ - 1;
  poll_until(
      [&] {
        answer_queries();  // the others may be asking at the same moment
        for (int peer = 0; peer < size_; ++peer) {
          if (joined[peer]) continue;
          int done = 0;
          MDDP_MPI_CHECK(MPI_Test(&answers_[peer].receive, &done, MPI_STATUS_IGNORE));
          if (done) {
            joined[peer] = answers_[peer].started;
            --missing;
          }
        }
        return missing == 0;
      },
      kGraceSeconds);
  return describe_stall(rank_, number, joined, hosts_);
}

std::string describe_stall(int rank, std::int64_t number,
                           const std::vector<std::optional<std::int64_t>>& started,
                           const std::vector<std::string>& hosts) {
  const auto name = [&hosts](int peer) {
    return std::to_string(peer) + (peer < static_cast<int>(hosts.size()) ? "@" + hosts[peer] : "");
  };
  std::string behind;
  std::string silent;
  for (int peer = 0; peer < static_cast<int>(started.size()); ++peer) {
    if (!started[peer]) {
      silent += (silent.empty() ? "" : ", ") + name(peer);
    } else if (peer != rank && *started[peer] < number) {
      behind += (behind.empty() ? "" : ", ") + name(peer) + " (at #" +
                std::to_string(*started[peer]) + ")";
    }
  }
  std::string text;
  if (!silent.empty()) text = "rank(s) " + silent + " not responding (stalled, dead or busy)";
  if (!behind.empty()) {
    text += (text.empty() ? "" : "; ") + std::string("rank(s) ") + behind + " had not joined";
  }
  if (text.empty()) text = "every rank has joined; the transport itself is stuck";
  return "rank " + std::to_string(rank) + " waits for " + text;
}

}  // namespace mnist_ddp::distributed
