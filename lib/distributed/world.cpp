// lib/distributed/world.cpp — MPI start-up: ranks, node-local ranks and node count.
#include "distributed/world.hpp"

#include <array>
#include <cstdlib>

#include <unistd.h>

#include "config/train_config.hpp"
#include "distributed/mpi_watchdog.hpp"

namespace mnist_ddp::distributed {
namespace {

std::string host_name() {
  std::array<char, 256> name{};
  return gethostname(name.data(), name.size() - 1) == 0 ? name.data() : "";
}

std::string label_of(const std::string& rank, const std::string& host) {
  return "[rank " + rank + "@" + host + "]";
}

/// Whether MPI calls can be made: after MPI_Init, before MPI_Finalize.
bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

}  // namespace

World::World(int* argc, char*** argv) {
  // On CUDA the gradient hooks call MPI from autograd's thread: plan_devices refuses less there.
  MDDP_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &thread_level_));
  // Return codes become exceptions with a message, not Open MPI's silent job kill.
  MDDP_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MDDP_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MDDP_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));

  MPI_Comm node = MPI_COMM_NULL;
  MDDP_MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  MDDP_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
  MDDP_MPI_CHECK(MPI_Comm_size(node, &local_size_));
  node_id_ = rank_;
  MDDP_MPI_CHECK(MPI_Bcast(&node_id_, 1, MPI_INT, 0, node));
  MDDP_MPI_CHECK(MPI_Comm_free(&node));

  // Each node has exactly one local rank 0.
  const int leads_a_node = local_rank_ == 0 ? 1 : 0;
  MDDP_MPI_CHECK(MPI_Allreduce(&leads_a_node, &node_count_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

  host_ = host_name();
  watchdog_ = std::make_unique<MpiWatchdog>(MPI_COMM_WORLD, config::TrainConfig{}.comm_timeout);
}

World::~World() {
  watchdog_.reset();  // frees its communicator while MPI is still up
  if (mpi_running()) MPI_Finalize();
}

void World::set_comm_timeout(double seconds) { watchdog_->set_timeout(seconds); }

std::string World::label() const { return label_of(std::to_string(rank_), host_); }

std::string process_label() {
  int rank = 0;
  const bool known = mpi_running() && MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS;
  return label_of(known ? std::to_string(rank) : "?", host_name());
}

void abort_job(int code, bool from_main_thread) {
  if (from_main_thread && mpi_running()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace mnist_ddp::distributed
