/* Abort mode under MPI: an error on one process ends the whole job (MPI_Abort) instead of
 * leaving the others hanging: a declaration refused on the last process only is refused on
 * every process (agreed before it is committed), and the first to report it aborts the job.
 * mpi-backends: seq threads
 * mpi-n: 2 3
 * mpi-expect-fail: op2 error [203]: op_decl_set 'bad' */
#include "test.h"

int main(int argc, char **argv)
{
  int rank;
  test_init(argc, argv);
  op_rank(&rank);
  op_decl_set(rank == op_num_ranks() - 1 ? -1 : 1, "bad");
  op_mpi_barrier();
  op_exit();
  return 0;
}
