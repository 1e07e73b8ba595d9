/* An OP2 MPI program started without mpiexec (issue 21, point 5): the program links MPI itself
 * (mpicc: libmpi is among its own DT_NEEDED), so op_init initialises MPI for it and the program
 * may call MPI after op_init (OP2's apps call MPI_Comm_rank) as one process; op_exit finalises
 * what op2 initialised. Before that: OP2_MPI with a bad value is OP2_ERR_BAD_CONFIG, and
 * OP2_MPI=0 runs op2 without MPI (not initialised; op_mpi_init is then refused).
 * mpi-backends: seq
 * mpi-n: 0 */
#include "test.h"
#include <mpi.h>

static const char *k_inc = "void inc(double *a) { a[0] += 1.0; }\n";

int main(int argc, char **argv)
{
  char token[128];
  int init = 0, fin = 0, rank = -1, size = -1;
  double v[4] = {1, 2, 3, 4};
  if (argc < 2) return 2;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  op_set_error_handler(OP_ERRORS_RETURN);

  test_init_tokens(argv[0], token, "OP2_MPI=yes", (const char *)NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "OP2_MPI='yes'", "use 0");
  MPI_Initialized(&init);
  CHECK(!init);

  /* OP2_MPI=0: op2 without MPI */
  test_init_tokens(argv[0], token, "OP2_MPI=0", (const char *)NULL);
  CHECK_OK();
  MPI_Initialized(&init);
  CHECK(!init);
  CHECK_INT(op_num_ranks(), 1);
  op_exit();
  op_mpi_init(3, (char *[]){argv[0], token, "OP2_MPI=0"}, 0, 0, 0);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_mpi_init", "OP2_MPI=0");
  MPI_Initialized(&init);
  CHECK(!init);

  /* default: the program links MPI, so op_init initialises it */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_OK();
  MPI_Initialized(&init);
  CHECK(init);
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS);
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS);
  CHECK_INT(rank, 0);
  CHECK_INT(size, 1);
  CHECK_INT(op_num_ranks(), 1);
  op_set s = op_decl_set(4, "s");
  op_dat d = op_decl_dat(s, 1, "double", v, "d");
  op_kernel k = op_decl_kernel(k_inc, "inc");
  PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  op_fetch_data(d, v);
  CHECK_OK();
  CHECK_DBL(v[0], 2.0);
  CHECK_DBL(v[3], 5.0);
  op_exit();
  CHECK_OK();
  MPI_Finalized(&fin);
  CHECK(fin);
  return 0;
}
