// lib/distributed/world.hpp — provides: World (RAII MPI, ranks, nodes), process_label, abort_job.
#pragma once

#include <memory>
#include <string>

#include <mpi.h>

namespace mnist_ddp::distributed {

class MpiWatchdog;

/// The MPI world of this process. Construct once, first thing in main.
class World {
 public:
  World(int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }              ///< rank in MPI_COMM_WORLD
  int size() const { return size_; }              ///< number of ranks
  int local_rank() const { return local_rank_; }  ///< rank among the ranks on this node
  int local_size() const { return local_size_; }  ///< ranks on this node
  int node_count() const { return node_count_; }  ///< nodes the job spans
  /// The world rank of this node's local rank 0: unique even where containers share host names.
  int node_id() const { return node_id_; }
  /// As MPI_Init_thread provided it.
  int thread_level() const { return thread_level_; }
  const std::string& host() const { return host_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }

  /// Watches start-up's collectives on comm() (Note [Stall diagnosis]).
  MpiWatchdog& watchdog() const { return *watchdog_; }
  /// The watchdog's deadline: the default --comm-timeout until the options are known.
  void set_comm_timeout(double seconds);

  /// "[rank 3@gpu07]": the prefix of every error line.
  std::string label() const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int node_count_ = 1;
  int node_id_ = 0;
  int thread_level_ = 0;
  std::string host_;
  std::unique_ptr<MpiWatchdog> watchdog_;
};

/// World::label() where no World could be made: the rank from MPI where it started, else "?".
std::string process_label();

// Note [Ending the job]. Failures end the program through agreements (Note [One agreement]) and
// main's return. Only where no agreement can reach ranks blocked in a collective (an error outside
// an agreed phase, a stalled NCCL collective) does abort_job end the job: MPI_Abort from the main
// thread; from another thread, which MPI_THREAD_SERIALIZED keeps out of MPI, this process alone
// exits and the launcher ends the other ranks.

/// Ends the job with `code` (Note [Ending the job]).
[[noreturn]] void abort_job(int code, bool from_main_thread = true);

}  // namespace mnist_ddp::distributed
