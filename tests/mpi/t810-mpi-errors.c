/* MPI error paths (op2 initialises MPI itself here): op_partition with unknown names (the
 * message lists the supported ones), RCB without its coordinates (a k-way routine without its
 * map partitions by blocks, as OP2's: t816), a second call, sets and
 * maps declared after it, global map values out of range; OP2_MPI_CHECK=1 turning ranks that
 * call different loops into OP2_ERR_MPI naming both calls instead of a hang; and op_init after
 * op_exit finalised MPI is OP2_ERR_MPI; PARMETIS/PTSCOTCH without a loadable ParMETIS library
 * is OP2_ERR_BACKEND_UNAVAILABLE naming what was tried, and changes nothing.
 * mpi-n: 1 2 3 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include <mpi.h>

static const char *k_one = "void one(double *a) { *a = 1.0; }\n";

int main(int argc, char **argv)
{
  char token[128];
  int rank, p, i;
  (void)argc;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens(argv[0], token, "OP2_MPI_CHECK=1", (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);
  int init = 0;
  MPI_Initialized(&init);
  CHECK(init); /* op_init initialised MPI under mpiexec */

  /* 3 elements per process; the map's values are global */
  int vals[3];
  for (i = 0; i < 3; i++) vals[i] = (3 * rank + i + 1) % (3 * p);
  op_set a = op_decl_set(3, "a");
  op_set b = op_decl_set(3, "b");
  int bad[3] = {0, 3 * p, 1};
  op_decl_map(a, b, 1, bad, "bad");
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'bad'", "outside [0,");
  op_map m = op_decl_map(a, b, 1, vals, "m");
  CHECK_OK();
  op_dat d = op_decl_dat(a, 1, "double", NULL, "d");
  /* before op_partition: fetches by global range already gather the blocks */
  double mine[3], all[12];
  for (i = 0; i < 3; i++) mine[i] = 10.0 * (3 * rank + i);
  op_dat dv = op_decl_dat(a, 1, "double", mine, "dv");
  op_fetch_data_idx(dv, all, 0, 3 * p - 1);
  CHECK_OK();
  for (i = 0; i < 3 * p; i++) CHECK_DBL(all[i], 10.0 * i);

  op_partition("SCOTCHY", "KWAY", a, m, NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "'SCOTCHY'", "supported are BLOCK, RANDOM, RCB");
  op_partition("RCB", NULL, a, OP_ID, NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "coords");
  setenv("OP2_PARMETIS_LIB", "libop2-no-such-parmetis.so", 1);
  op_partition("PTSCOTCH", "KWAY", a, m, NULL);
  if (p > 1) /* one process: op_partition only checks its arguments */
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_partition", "libop2-no-such-parmetis.so", "OP2_PARMETIS_LIB");
  else
    CHECK_OK();
  unsetenv("OP2_PARMETIS_LIB");
  op_partition("PARMETIS", "KWAY", a, m, NULL);
  CHECK_OK();
  if (p > 1) {
    op_partition("BLOCK", NULL, a, OP_ID, NULL);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "already partitioned");
    op_decl_set(1, "late");
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_decl_set", "before op_partition");
  }

  op_kernel k = op_decl_kernel(k_one, "one");
  PAR_LOOP(k, "same", a, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  if (p > 1) {
    /* rank 0 calls loop "left", the others "right" */
    PAR_LOOP(k, rank == 0 ? "left" : "right", a, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_MPI, "op_par_loop", "OP2_MPI_CHECK", "different orders", "op_par_loop 'left'", "op_par_loop 'right'");
  }
  /* in step again: everything works */
  PAR_LOOP(k, "same", a, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  op_exit();
  CHECK_OK();
  /* op2 finalised the MPI it initialised: it cannot start again in this process */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_ERR(OP2_ERR_MPI, "op_init", "finalised");
  return 0;
}
