/* Abort mode under MPI: an error on one process ends the whole job (MPI_Abort) while the
 * others wait in a collective, instead of leaving them hanging.
 * mpi-backends: seq threads
 * mpi-n: 2 3
 * mpi-expect-fail: op2 error [203]: op_decl_set 'bad' */
#include "test.h"

int main(int argc, char **argv)
{
  int rank;
  test_init(argc, argv);
  op_rank(&rank);
  if (rank == op_num_ranks() - 1) op_decl_set(-1, "bad");
  op_mpi_barrier();
  op_exit();
  return 0;
}
