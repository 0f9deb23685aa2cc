// tests/e2e/corrupt_allreduce.cpp — provides: a PMPI shim, preloaded into the ranks by
// tests/e2e/test_allreduce_bench.sh and tests/gpu/test_multirank_rehearsal.sh, that makes every
// float sum allreduce deliver one wrong element on the last rank, so that the benchmark's result
// check and the multi-rank checks can be seen to catch wrong data without a testing hook inside
// the program.
#include <mpi.h>

/// Float sums complete at once (blocking, through the PMPI entry point) and the last rank's first
/// element comes back 1 too high: in a gradient bucket a gradient, where the last element may be
/// the agreed stop flag. Every other allreduce passes through unchanged. The request returned is a
/// real one, of an MPI_Ibarrier on MPI_COMM_SELF, so the caller tests and waits for it as for any
/// allreduce.
extern "C" int MPI_Iallreduce(const void* send, void* receive, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (type != MPI_FLOAT || op != MPI_SUM) {
    return PMPI_Iallreduce(send, receive, count, type, op, comm, request);
  }
  const int status = PMPI_Allreduce(send, receive, count, type, op, comm);
  if (status != MPI_SUCCESS) return status;
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (rank == size - 1 && count > 0) static_cast<float*>(receive)[0] += 1;
  return PMPI_Ibarrier(MPI_COMM_SELF, request);
}
