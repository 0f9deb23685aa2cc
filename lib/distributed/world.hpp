// lib/distributed/world.hpp — provides: World (RAII MPI start-up and teardown, world rank and size,
// local rank and count on this node, the node's identity and count, host name, the MPI thread
// level, watched waits for the collectives of start-up), process_label() and abort_job().
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
  /// This node's identity: the world rank of its local rank 0. Unlike the host name it differs
  /// between nodes even where containers give every node the same name.
  int node_id() const { return node_id_; }
  /// The MPI thread level MPI_Init_thread provided (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  int thread_level() const { return thread_level_; }
  const std::string& host() const { return host_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }

  /// Waits for `request`, a collective just started on comm(), as the training collectives wait
  /// (Note [Stall diagnosis]): after the --comm-timeout it throws CommTimeout naming `what` and
  /// the ranks that had not joined, so a rank stuck before it (a stalled file system while loading
  /// data, a hanging GPU driver) ends the job instead of leaving the others waiting for ever.
  void wait(MPI_Request& request, const std::string& what) const;
  /// The watchdog of wait(), for the steps that take one (agreements, NCCL's set-up).
  MpiWatchdog& watchdog() const { return *watchdog_; }
  /// The deadline of wait(): the default --comm-timeout until the options are known.
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
  std::unique_ptr<MpiWatchdog> watchdog_;  // of start-up's collectives on comm()
};

/// World::label() where no World could be made: the rank from MPI where it started, else "?".
std::string process_label();

/// Ends every rank of the job with `code` (MPI_Abort) where MPI has started, else this process.
/// Use when other ranks may be blocked in a collective and can no longer be reached by an agreed
/// error path.
[[noreturn]] void abort_job(int code);

}  // namespace mnist_ddp::distributed
