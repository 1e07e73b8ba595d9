/* A program started by a launcher of another MPI sees one process where the launcher started
 * several: op_init must fail loudly (OP2_ERR_MPI naming the launcher's count) instead of
 * running N copies of a one-process job. Simulated by running without mpiexec with MPICH's
 * PMI_SIZE set, as mpiexec.mpich would.
 * mpi-backends: seq
 * mpi-n: 0 */
#include "test.h"

int setenv(const char *name, const char *value, int overwrite);

int main(int argc, char **argv)
{
  (void)argc;
  setenv("PMI_SIZE", "3", 1);
  op_set_error_handler(OP_ERRORS_RETURN);
  test_init(argc, argv);
  CHECK_ERR(OP2_ERR_MPI, "op_init", "started 3 processes", "PMI_SIZE=3", "different MPI");
  CHECK_INT(op_num_ranks(), 1);
  return 0;
}
