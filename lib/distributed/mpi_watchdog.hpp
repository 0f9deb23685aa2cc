// lib/distributed/mpi_watchdog.hpp — provides: MpiWatchdog (names absent ranks), describe_stall,
// MDDP_MPI_CHECK (a CommError naming call, text and site), keep_until_exit.
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

void check_mpi(int result, const char* expression, const char* file, int line);

/// Keeps `buffer` alive until exit: a late message into a freed buffer would corrupt memory.
void keep_until_exit(std::shared_ptr<const void> buffer);

/// Thrown at a watched wait's timeout: the stalled rank would not join an agreement either.
struct CommTimeout : CommError {
  using CommError::CommError;
};

/// Note [Stall diagnosis]. Each rank counts the collectives it starts and, while waiting, answers
/// count queries on a duplicate communicator. On timeout a rank asks every peer and waits a short
/// grace: a lower count had not joined; silence means stalled, dead or busy. Answers land in the
/// watchdog, as they may come after the diagnosis gave up; a peer still owing one is not re-asked.
class MpiWatchdog {
 public:
  /// Collective: duplicates `comm` and gathers every rank's host name.
  MpiWatchdog(MPI_Comm comm, double timeout_seconds);
  /// Withdraws the queries whose answers never came.
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  void set_timeout(double seconds) { timeout_seconds_ = seconds; }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Call when a collective is started on the watched communicator; returns its number.
  std::int64_t started() { return ++started_; }

  /// Tests `request` once (answering queries); true when it is complete.
  bool test(MPI_Request& request);

  /// Throws CommTimeout after the timeout, keeping `buffers` (a late rank may write) until exit.
  void wait(MPI_Request& request, std::int64_t number, const std::string& what,
            std::shared_ptr<const void> buffers = nullptr);
  /// wait() for a collective just started on comm().
  void wait(MPI_Request& request, const std::string& what,
            std::shared_ptr<const void> buffers = nullptr) {
    wait(request, started(), what, std::move(buffers));
  }

 private:
  void answer_queries();
  std::string diagnose(std::int64_t number);

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

/// Note [Stall diagnosis] as text; `started[r]` is rank r's count, nullopt when it did not answer.
std::string describe_stall(int rank, std::int64_t number,
                           const std::vector<std::optional<std::int64_t>>& started,
                           const std::vector<std::string>& hosts = {});

}  // namespace mnist_ddp::distributed

#define MDDP_MPI_CHECK(expr) ::mnist_ddp::distributed::check_mpi((expr), #expr, __FILE__, __LINE__)
