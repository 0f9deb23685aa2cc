// tests/e2e/corrupt_allreduce.cpp — provides: a PMPI shim, preloaded into the ranks by
// tests/e2e/test_allreduce_bench.sh, that makes every float sum allreduce deliver one wrong
// element on the last rank, so that the benchmark's result check can be seen to catch wrong data
// without a testing hook inside the program.
#include <mpi.h>

/// Float sums complete at once (blocking, through the PMPI entry point) and the last rank's last
/// element comes back 1 too high; every other allreduce passes through unchanged. The request
/// returned is MPI_REQUEST_NULL, which MPI_Test and MPI_Wait report complete.
extern "C" int MPI_Iallreduce(const void* send, void* receive, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (type != MPI_FLOAT || op != MPI_SUM) {
    return PMPI_Iallreduce(send, receive, count, type, op, comm, request);
  }
  const int status = PMPI_Allreduce(send, receive, count, type, op, comm);
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (status == MPI_SUCCESS && rank == size - 1 && count > 0) {
    static_cast<float*>(receive)[count - 1] += 1;
  }
  *request = MPI_REQUEST_NULL;
  return status;
}
