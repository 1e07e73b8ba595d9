/* op_partition agrees before it commits (issue 37, point 1): its arguments, every check and
 * the loading of the partitioner's library are agreed before any process starts collective
 * work, so
 * - processes passing different routines (RCB on one, BLOCK on another) get
 *   OP2_ERR_BAD_CONFIG naming both argument lists, on every process (they hung in different
 *   partitioners);
 * - KWAY with a map on one process and without on another: the same (the others hung inside
 *   PT-Scotch);
 * - the ParMETIS interface library failing to load on one process only
 *   (OP2_PARMETIS_LIB=/nonexistent there) is OP2_ERR_BACKEND_UNAVAILABLE on every process (the
 *   job aborted with MPI_ERR_TRUNCATE);
 * - GEOMKWAY with coordinates on the wrong set on one process only: OP2_ERR_BAD_CONFIG on all;
 * each failure leaves the session as it was: the next op_partition (PTSCOTCH KWAY, all agreed)
 * works and an indirect loop counts every cell's edges exactly.
 * mpi-n: 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_count = "void count(double *l, double *r) { l[0] += 1.0; r[0] += 1.0; }\n";

static double want_edges(const grid *g, int c)
{
  int i = c % g->nx, j = c / g->nx;
  return (i > 0) + (i < g->nx - 1) + (j > 0) + (j < g->ny - 1);
}

int main(int argc, char **argv)
{
  int rank, p;
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  p = op_num_ranks();
  op_rank(&rank);

  grid g;
  grid_make(&g, 9, 7);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  op_set nodes = op_decl_set(nn, "nodes");
  op_set edges = op_decl_set(ne, "edges");
  op_set cells = op_decl_set(nc, "cells");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat cnt = op_decl_dat(cells, 1, "double", NULL, "cnt");
  CHECK_OK();
  (void)pcell;

  /* different routines */
  if (rank == 0)
    op_partition("RCB", NULL, cells, OP_ID, cx);
  else
    op_partition("BLOCK", "ANY", cells, OP_ID, NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "different arguments", "rank 0 lib 'RCB'", "lib 'BLOCK'");

  /* a map on one process only */
  op_partition("PTSCOTCH", "KWAY", cells, rank == p - 1 ? OP_ID : pecell, NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "different arguments", "prime_map 'pecell'", "prime_map NULL");

  /* the ParMETIS interface does not load on the last process */
  if (rank == p - 1) setenv("OP2_PARMETIS_LIB", "/nonexistent/libparmetis-t818.so", 1);
  op_partition("PARMETIS", "KWAY", cells, pecell, NULL);
  CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_partition", "no ParMETIS interface library could be loaded");
  unsetenv("OP2_PARMETIS_LIB");

  /* GEOMKWAY's coordinates on the wrong set on process 0 only (same handles elsewhere would be
   * caught as different arguments: give every process a wrong-set dat, of another set on 0) */
  op_partition("PARMETIS", "GEOMKWAY", cells, pecell, rank == 0 ? x : cx);
  CHECK(op_last_error_code() == OP2_ERR_BAD_CONFIG);

  /* in step: partition, loop, exact counts */
  op_partition("PTSCOTCH", "KWAY", cells, pecell, NULL);
  CHECK_OK();
  op_kernel k = op_decl_kernel(k_count, "count");
  PAR_LOOP(k, "count", edges, op_arg_dat(cnt, 0, pecell, 1, "double", OP_INC),
           op_arg_dat(cnt, 1, pecell, 1, "double", OP_INC));
  CHECK_OK();
  double *buf = malloc(sizeof(double) * (size_t)(nc + 1));
  op_fetch_data(cnt, buf);
  CHECK_OK();
  for (int c = 0; c < nc; c++) CHECK_DBL(buf[c], want_edges(&g, c0 + c));
  free(buf);
  grid_free(&g);
  op_exit();
  return 0;
}
