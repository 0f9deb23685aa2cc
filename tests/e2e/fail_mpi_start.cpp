// tests/e2e/fail_mpi_start.cpp — provides: a PMPI shim, preloaded into the ranks by
// tests/e2e/test_faults.sh, that makes MPI's start-up fail on the last rank (its
// MPI_Comm_split_type returns an error), so that a failure inside World's constructor can be seen
// to end every rank with exit 5 while the others wait in that collective.
#include <mpi.h>

/// The last rank of MPI_COMM_WORLD gets MPI_ERR_OTHER without joining the collective; the others
/// join it and wait there until the job is aborted.
extern "C" int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                   MPI_Comm* newcomm) {
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1) return MPI_ERR_OTHER;
  return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}
