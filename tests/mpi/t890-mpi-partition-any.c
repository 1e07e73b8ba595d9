/* Issue 21, point 6: op_partition("BLOCK", "ANY", ...) as OP2's tutorial Airfoil calls it, and
 * RANDOM with any routine, partition under MPI; a misspelt library or a routine the library
 * lacks is OP2_ERR_BAD_CONFIG on every rank. A ring of 4 cells per process, each edge adding
 * 1 to both its cells: every cell gets 2 after either partitioning. The program initialises
 * MPI itself, so op_exit leaves it for the second session.
 * mpi-n: 1 2 3 */
#include "test.h"
#include <mpi.h>

static void run(const char *backend, const char *lib, const char *routine)
{
  char token[128];
  int rank, p, i;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t890", token, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);
  {
    int e2c[2 * 4];
    double xv[2 * 4], got[4 * 16];
    int total = 4 * p;
    for (i = 0; i < 4; i++) {
      int g = 4 * rank + i;
      e2c[2 * i] = g;
      e2c[2 * i + 1] = (g + 1) % total;
      xv[2 * i] = (double)g;
      xv[2 * i + 1] = 0.5 * g;
    }
    op_set cells = op_decl_set(4, "cells"), edges = op_decl_set(4, "edges");
    op_map pecell = op_decl_map(edges, cells, 2, e2c, "pecell");
    op_dat x = op_decl_dat(cells, 2, "double", xv, "p_x");
    op_dat n = op_decl_dat(cells, 1, "double", NULL, "n");
    op_kernel k = op_decl_kernel("void cnt(double *a, double *b) { *a += 1.0; *b += 1.0; }\n", "cnt");

    op_partition("BLOK", "ANY", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'BLOK' routine 'ANY'");
    op_partition("METIS", "ANY", edges, pecell, x);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "lib 'METIS' routine 'ANY'");
    op_partition(lib, routine, edges, pecell, x);
    CHECK_OK();
    PAR_LOOP(k, "count", edges, op_arg_dat(n, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(n, 1, pecell, 1, "double", OP_INC));
    CHECK_OK();
    op_fetch_data_idx(n, got, 0, total - 1);
    CHECK_OK();
    for (i = 0; i < total; i++) CHECK_DBL(got[i], 2.0);
  }
  op_exit();
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  run(argv[1], "BLOCK", "ANY");
  run(argv[1], "RANDOM", "ANY");
  MPI_Finalize();
  return 0;
}
