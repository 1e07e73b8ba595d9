/* Agreement before commitment (issue 21, point 5): every collective op2 call is entered by all
 * processes together, so
 * - OP2_MPI_CHECK set on one process only is OP2_ERR_BAD_CONFIG at op_init on every process,
 *   and the next op_init works (op2 keeps the MPI it initialised for it);
 * - processes at different declarations (op_decl_set on some, op_decl_dat on another), or at
 *   op_write_vtk and op_fetch_data, get OP2_ERR_MPI naming both calls on every process, never
 *   success with garbage block offsets; so do op_exit and op_mpi_barrier (the session stays);
 * - a declaration refused on one process only (negative size, a map entry out of range in one
 *   block, a bad type, a NULL constant, a kernel file one process cannot read, freeing a dat
 *   that is not temporary) is that error on every process and declares nothing anywhere;
 * - op_fetch_data with NULL on one process and op_print_dat_to_txtfile failing on process 0
 *   are errors on every process;
 * then op_partition (METIS) and an indirect loop work, with every cell's edge count checked,
 * and op_exit finalises MPI.
 * mpi-n: 2 3 */
#include "grid.h"
#include "test.h"
#include <mpi.h>

static const char *k_count = "void count(double *l, double *r) { l[0] += 1.0; r[0] += 1.0; }\n";

static double want_edges(const grid *g, int c)
{
  int i = c % g->nx, j = c / g->nx;
  return (i > 0) + (i < g->nx - 1) + (j > 0) + (j < g->ny - 1);
}

int main(int argc, char **argv)
{
  char token[128], msg[64];
  int rank, p, i, last;
  if (argc < 2) return 2;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  op_set_error_handler(OP_ERRORS_RETURN);

  /* OP2_MPI_CHECK on process 0 only: refused everywhere (a check on some processes only would
   * make them wait in collectives the others never enter). */
  {
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
    int r0 = env_rank ? atoi(env_rank) : 0;
    test_init_tokens(argv[0], token, r0 == 0 ? "OP2_MPI_CHECK=1" : "OP2_MPI_CHECK=0", (const char *)NULL);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "OP2_MPI_CHECK differs between processes", "process(es) 0 only");
  }
  /* the next op_init takes over the MPI the failed one initialised */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_OK();
  p = op_num_ranks();
  op_rank(&rank);
  last = p - 1;
  snprintf(msg, sizeof msg, "(on process %d)", last);

  grid g;
  grid_make(&g, 7, 5);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);

  op_set nodes = op_decl_set(nn, "nodes");
  CHECK_OK();

  /* different declarations: OP2_ERR_MPI on every process, naming both calls */
  if (rank == last) {
    op_decl_dat(nodes, 1, "double", NULL, "zz");
    CHECK_ERR(OP2_ERR_MPI, "op_decl_dat", "different orders", "op_decl_set");
  } else {
    op_decl_set(3, "zz");
    CHECK_ERR(OP2_ERR_MPI, "op_decl_set", "different orders", "op_decl_dat");
  }

  /* a negative size on the last process only: refused everywhere */
  op_decl_set(rank == last ? -1 : 5, "bad");
  if (rank == last)
    CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_set 'bad'", "size -1 is negative");
  else
    CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_set 'bad'", "size -1 is negative", msg);

  op_set cells = op_decl_set(nc, "cells");
  op_set edges = op_decl_set(ne, "edges");
  CHECK_OK();
  /* nothing was declared in between: sizes and offsets are the blocks' */
  CHECK_INT((int)op_get_size(nodes), g.nnode);
  CHECK_INT((int)op_get_size(cells), g.ncell);
  CHECK_INT((int)op_get_global_set_offset(cells), c0);
  CHECK_INT((int)op_get_global_set_offset(edges), e0);

  /* a map entry out of range in the last block only: no map on any process */
  int *ec = malloc(sizeof(int) * 2 * (size_t)(ne + 1));
  for (i = 0; i < 2 * ne; i++) ec[i] = g.ecell[2 * e0 + i];
  if (rank == last) ec[2 * ne - 1] = g.ncell;
  op_decl_map(edges, cells, 2, ec, "pecell");
  if (rank == last)
    CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'pecell'");
  else
    CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'pecell'", msg);
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  CHECK_OK();

  /* a bad type on process 0 only */
  op_decl_dat(cells, 1, rank == 0 ? "doubel" : "double", NULL, "cnt");
  CHECK_INT(op_last_error_code(), OP2_ERR_BAD_TYPE);
  op_dat cnt = op_decl_dat(cells, 1, "double", NULL, "cnt");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  CHECK_OK();

  /* a constant with NULL data on the last process */
  double alpha = 2.0;
  op_decl_const(1, "double", rank == last ? NULL : &alpha, "alpha");
  CHECK_INT(op_last_error_code(), OP2_ERR_NULL_ARGUMENT);

  /* a kernel file only process 0 can read */
  {
    char path[64];
    snprintf(path, sizeof path, "t811-kernel-%d.h", p);
    if (rank == 0) {
      FILE *f = fopen(path, "w");
      CHECK(f != NULL);
      fputs(k_count, f);
      fclose(f);
    }
    op_decl_kernel_file(rank == 0 ? path : "t811-no-such-kernel.h", "count");
    CHECK_INT(op_last_error_code(), OP2_ERR_IO);
    if (rank != 0) CHECK_ERR(OP2_ERR_IO, "op_decl_kernel_file", "t811-no-such-kernel.h");
  }

  /* freeing a dat that is not temporary on the last process only: nothing freed anywhere */
  op_dat tmp = op_decl_dat_temp_char(cells, 1, "double", 8, "tmp");
  CHECK_OK();
  op_free_dat_temp_char(rank == last ? cnt : tmp);
  CHECK_INT(op_last_error_code(), OP2_ERR_BAD_NAME);
  CHECK_INT(op_free_dat_temp_char(tmp), 1);
  CHECK_OK();

  /* op_fetch_data with NULL on the last process */
  double *buf = malloc(sizeof(double) * (size_t)(nc + 1));
  op_fetch_data(cnt, rank == last ? NULL : buf);
  CHECK_INT(op_last_error_code(), OP2_ERR_NULL_ARGUMENT);
  /* process 0 cannot write the file: an error everywhere */
  op_print_dat_to_txtfile(cnt, "t811-no-such-dir/cnt.txt");
  CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_txtfile", "t811-no-such-dir/cnt.txt");

  /* in step again: partition, loop, results */
  op_partition("METIS", "KWAY", cells, pecell, NULL);
  CHECK_OK();
  op_kernel k = op_decl_kernel(k_count, "count");
  PAR_LOOP(k, "count", edges, op_arg_dat(cnt, 0, pecell, 1, "double", OP_INC),
           op_arg_dat(cnt, 1, pecell, 1, "double", OP_INC));
  CHECK_OK();
  op_fetch_data(cnt, buf);
  CHECK_OK();
  for (i = 0; i < nc; i++) CHECK_DBL(buf[i], want_edges(&g, c0 + i));

  /* op_write_vtk on process 0 while the others fetch */
  if (rank == 0) {
    op_write_vtk("t811.vtu", pcell, x, 1, &cnt, 0);
    CHECK_ERR(OP2_ERR_MPI, "op_write_vtk", "different orders", "op_fetch_data");
  } else {
    op_fetch_data(cnt, buf);
    CHECK_ERR(OP2_ERR_MPI, "op_fetch_data", "different orders", "op_write_vtk");
  }
  op_fetch_data(cnt, buf);
  CHECK_OK();
  for (i = 0; i < nc; i++) CHECK_DBL(buf[i], want_edges(&g, c0 + i));

  /* op_exit on process 0 while the others wait at a barrier: the session stays open */
  if (rank == 0) {
    op_exit();
    CHECK_ERR(OP2_ERR_MPI, "op_exit", "different orders", "op_mpi_barrier");
  } else {
    op_mpi_barrier();
    CHECK_ERR(OP2_ERR_MPI, "op_mpi_barrier", "different orders", "op_exit");
  }
  CHECK_INT(op_num_ranks(), p);
  op_exit();
  CHECK_OK();
  int fin = 0;
  MPI_Finalized(&fin);
  CHECK(fin); /* op2 initialised MPI (in the failed op_init), so op_exit finalised it */
  free(buf);
  free(ec);
  grid_free(&g);
  return 0;
}
