// tests/support/late_rank.cpp — one empty message from every other rank to the held one.
#include "support/late_rank.hpp"

#include <mpi.h>

#include <vector>

#include "distributed/poll_wait.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::testing {
namespace {

// No other message of the tests uses this tag on the world.
constexpr int kReleaseTag = 77;

}  // namespace

void release(int held) { MPI_Send(nullptr, 0, MPI_BYTE, held, kReleaseTag, test_world().comm()); }

bool hold_until_released(int held, double seconds, const std::function<bool(MPI_Request&)>& test) {
  const distributed::World& world = test_world();
  std::vector<MPI_Request> releases;
  for (int peer = 0; peer < world.size(); ++peer) {
    if (peer == held) continue;
    releases.emplace_back();
    MPI_Irecv(nullptr, 0, MPI_BYTE, peer, kReleaseTag, world.comm(), &releases.back());
  }
  const bool released = distributed::poll_until(
      [&] {
        bool all = true;
        for (MPI_Request& request : releases) {
          int done = 0;
          if (test) {
            done = test(request) ? 1 : 0;
          } else {
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          }
          all = all && done != 0;
        }
        return all;
      },
      seconds);
  // A release that never came would be received by nothing: withdrawn.
  for (MPI_Request& request : releases) {
    if (request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  return released;
}

}  // namespace mnist_ddp::testing
