/* HDF5 under MPI: OP2's files read and written by every process, each handling only its own
 * block. Three op2 sessions in one MPI job (the test initialises MPI, so op_exit leaves it):
 * 1. declare a 7x5 grid as blocks, op_dump_to_hdf5 + op_write_const_hdf5 (the write path
 *    before op_partition);
 * 2. read it back with op_decl_*_hdf5 / op_get_const_hdf5 (each process its block: offsets
 *    and values checked), the error paths (missing file, a file missing on some processes
 *    only, missing dataset, wrong dim, missing constant) as the same named error on every
 *    process, then op_partition (METIS), loops through the maps read, and the results written
 *    with op_fetch_data_hdf5_file, op_fetch_data_hdf5_file_path (inside groups) and
 *    op_dump_to_hdf5 (rows gathered to their declared blocks by original index);
 * 3. read those files back and check every value against the grid.
 * The files of every process count stay in the test directory as t850-dump-<P>.h5 and
 * t850-out-<P>.h5; tests/mpi/h5same.py (make test-mpi-io) checks they equal P=1's exactly.
 * mpi-n: 1 2 3 */
#include "grid.h"
#include "test.h"
#include <mpi.h>

static const char *k_sum =
    "void sum(const double *a, const double *b, const double *c, const double *d, double *r)"
    " { r[0] = a[0] + a[1] + b[0] + b[1] + c[0] + c[1] + d[0] + d[1]; }\n";
static const char *k_count = "void count(double *l, double *r) { l[0] += 1.0; r[0] += 1.0; }\n";

static void init(const char *prog, const char *backend)
{
  char token[128];
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, token, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
}

/* Expected results: cell c's node coordinates summed, and its number of interior edges. */
static double want_sum(const grid *g, int c)
{
  double s = 0;
  for (int k = 0; k < 4; k++) s += g->x[2 * g->cnode[4 * c + k]] + g->x[2 * g->cnode[4 * c + k] + 1];
  return s;
}

static double want_edges(const grid *g, int c)
{
  int i = c % g->nx, j = c / g->nx;
  return (i > 0) + (i < g->nx - 1) + (j > 0) + (j < g->ny - 1);
}

static void sum_loop(op_kernel k, op_set cells, op_map pcell, op_dat x, op_dat r)
{
  PAR_LOOP(k, "sum", cells, op_arg_dat(x, 0, pcell, 2, "double", OP_READ),
           op_arg_dat(x, 1, pcell, 2, "double", OP_READ), op_arg_dat(x, 2, pcell, 2, "double", OP_READ),
           op_arg_dat(x, 3, pcell, 2, "double", OP_READ), op_arg_dat(r, -1, OP_ID, 1, "double", OP_WRITE));
}

int main(int argc, char **argv)
{
  int rank, p, i;
  char dump[64], out[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 2) return 2;
  snprintf(dump, sizeof dump, "t850-dump-%d.h5", p);
  snprintf(out, sizeof out, "t850-out-%d.h5", p);
  grid g;
  grid_make(&g, 7, 5);
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);

  /* 1: the input file, written from the declared blocks */
  init(argv[0], argv[1]);
  {
    op_set nodes = op_decl_set(nn, "nodes");
    op_set cells = op_decl_set(nc, "cells");
    op_set edges = op_decl_set(ne, "edges");
    op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
    op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
    op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "p_x");
    int *flag = malloc(sizeof(int) * (size_t)(nc + 1));
    for (i = 0; i < nc; i++) flag[i] = 3 * (c0 + i) - 7;
    op_decl_dat(cells, 1, "int", flag, "p_flag");
    op_decl_dat(cells, 1, "int", flag, "p_flag2"); /* read back after op_partition (one name, one dat) */
    free(flag);
    /* a set of one element: every process but the last has nothing to read or write */
    double big = 42.5;
    op_set tiny = op_decl_set(block_n(1, rank, p), "tiny");
    op_decl_dat(tiny, 1, "double", &big, "p_tiny");
    CHECK_OK();
    op_dump_to_hdf5("t850-in.h5");
    CHECK_OK();
    double gam = 1.4, qinf[4] = {1, 2, 3, 4.5};
    op_write_const_hdf5("gam", 1, "double", (char *)&gam, "t850-in.h5");
    op_write_const_hdf5("qinf", 4, "double", (char *)qinf, "t850-in.h5");
    CHECK_OK();
  }
  op_exit();

  /* 2: read back by blocks, errors, partition, loops, write */
  init(argv[0], argv[1]);
  {
    double gam = 0, qinf[4] = {0};
    op_get_const_hdf5("gam", 1, "double", (char *)&gam, "t850-in.h5");
    op_get_const_hdf5("qinf", 4, "double", (char *)qinf, "t850-in.h5");
    CHECK_OK();
    CHECK_DBL(gam, 1.4);
    CHECK_DBL(qinf[3], 4.5);

    /* errors: the same named error on every process, nothing left waiting */
    CHECK(op_decl_set_hdf5("t850-missing.h5", "cells") == NULL);
    CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "cannot open 't850-missing.h5'");
    if (p > 1) {
      /* the file exists for process 0 only */
      CHECK(op_decl_set_hdf5(rank == 0 ? "t850-in.h5" : "t850-missing.h5", "cells") == NULL);
      CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "cannot open 't850-missing.h5'");
      if (rank == 0) CHECK_ERR(OP2_ERR_IO, "op_decl_set_hdf5", "(on process 1)");
    }
    op_get_const_hdf5("cfl", 1, "double", (char *)&gam, "t850-in.h5");
    CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_get_const_hdf5", "no dataset 'cfl'");

    op_set nodes = op_decl_set_hdf5("t850-in.h5", "nodes");
    op_set cells = op_decl_set_hdf5("t850-in.h5", "cells");
    op_set edges = op_decl_set_hdf5("t850-in.h5", "edges");
    CHECK_OK();
    CHECK_INT(op_get_size(cells), g.ncell);
    CHECK_INT(op_get_size(nodes), g.nnode);
    CHECK_INT(op_get_global_set_offset(cells), c0);
    CHECK_INT(op_get_global_set_offset(edges), e0);

    CHECK(op_decl_map_hdf5(cells, nodes, 3, "t850-in.h5", "pcell") == NULL);
    CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_map_hdf5", "'pcell'", "has dim 4; the call expects dim 3");
    CHECK(op_decl_dat_hdf5(cells, 4, "double", "t850-in.h5", "p_q") == NULL);
    CHECK_ERR(OP2_ERR_NO_DATASET, "op_decl_dat_hdf5", "has no dataset 'p_q'");
    CHECK(op_decl_dat_hdf5(nodes, 1, "int", "t850-in.h5", "p_flag") == NULL);
    CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_decl_dat_hdf5", "'p_flag'", "has 35 rows; set 'nodes' has 48 elements");

    op_set tiny = op_decl_set_hdf5("t850-in.h5", "tiny");
    op_dat dtiny = op_decl_dat_hdf5(tiny, 1, "double", "t850-in.h5", "p_tiny");
    CHECK_OK();
    CHECK_INT(op_get_size(tiny), 1);
    double got = 0;
    op_fetch_data(dtiny, &got); /* collective; only the last process holds the element */
    CHECK_OK();
    CHECK_DBL(got, rank == p - 1 ? 42.5 : 0.0);
    op_map pcell = op_decl_map_hdf5(cells, nodes, 4, "t850-in.h5", "pcell");
    op_map pecell = op_decl_map_hdf5(edges, cells, 2, "t850-in.h5", "pecell");
    op_dat x = op_decl_dat_hdf5(nodes, 2, "double", "t850-in.h5", "p_x");
    op_dat flag = op_decl_dat_hdf5(cells, 1, "int", "t850-in.h5", "p_flag");
    CHECK_OK();
    /* each process holds its declared block, in order */
    double *xb = malloc(sizeof(double) * 2 * (size_t)(nn + 1));
    int *fb = malloc(sizeof(int) * (size_t)(nc + 1));
    op_fetch_data(x, xb);
    op_fetch_data(flag, fb);
    for (i = 0; i < 2 * nn; i++) CHECK_DBL(xb[i], g.x[2 * n0 + i]);
    for (i = 0; i < nc; i++) CHECK_INT(fb[i], 3 * (c0 + i) - 7);

    op_partition("METIS", "KWAY", cells, pecell, x);
    CHECK_OK();
    /* after op_partition a dat read from the file still takes the process's declared block */
    op_dat flag2 = op_decl_dat_hdf5(cells, 1, "int", "t850-in.h5", "p_flag2");
    CHECK_OK();
    op_fetch_data(flag2, fb);
    for (i = 0; i < nc; i++) CHECK_INT(fb[i], 3 * (c0 + i) - 7);
    op_dat r = op_decl_dat(cells, 1, "double", NULL, "p_r");
    op_dat ecount = op_decl_dat(cells, 1, "double", NULL, "p_ecount");
    op_kernel ksum = op_decl_kernel(k_sum, "sum");
    op_kernel kcount = op_decl_kernel(k_count, "count");
    sum_loop(ksum, cells, pcell, x, r);
    PAR_LOOP(kcount, "count", edges, op_arg_dat(ecount, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(ecount, 1, pecell, 1, "double", OP_INC));
    CHECK_OK();
    double *rb = malloc(sizeof(double) * (size_t)(nc + 1));
    op_fetch_data(r, rb);
    for (i = 0; i < nc; i++) CHECK_DBL(rb[i], want_sum(&g, c0 + i));
    op_fetch_data(ecount, rb);
    for (i = 0; i < nc; i++) CHECK_DBL(rb[i], want_edges(&g, c0 + i));

    op_fetch_data_hdf5_file(r, out);
    op_fetch_data_hdf5_file(ecount, out);
    op_fetch_data_hdf5_file(r, out); /* an existing dataset is overwritten in place */
    op_fetch_data_hdf5_file_path(ecount, out, "results/step1/ecount"); /* groups created */
    CHECK_OK();
    op_dump_to_hdf5(dump);
    CHECK_OK();
    op_fetch_data_hdf5_file(x, "t850-in.h5"); /* same shape: in place */
    CHECK_OK();
    /* an existing dataset of another shape is refused everywhere */
    op_dat other = op_decl_dat(nodes, 1, "double", NULL, "p_r");
    op_fetch_data_hdf5_file(other, out);
    CHECK_ERR(OP2_ERR_FILE_FORMAT, "op_fetch_data_hdf5_file", "'p_r'", "is [35][1]", "[48][1]");
    free(xb);
    free(fb);
    free(rb);
  }
  op_exit();

  /* 3: what was written, read back (its blocks) */
  init(argv[0], argv[1]);
  {
    op_set nodes = op_decl_set_hdf5(dump, "nodes");
    op_set cells = op_decl_set_hdf5(dump, "cells");
    op_set edges = op_decl_set_hdf5(dump, "edges");
    CHECK_OK();
    CHECK_INT(op_get_size(edges), g.nedge);
    op_map pcell = op_decl_map_hdf5(cells, nodes, 4, dump, "pcell");
    op_map pecell = op_decl_map_hdf5(edges, cells, 2, dump, "pecell");
    op_dat x = op_decl_dat_hdf5(nodes, 2, "double", dump, "p_x");
    op_dat r = op_decl_dat_hdf5(cells, 1, "double", dump, "p_r");
    op_dat e = op_decl_dat_hdf5(cells, 1, "double", out, "p_ecount");
    op_dat ro = op_decl_dat_hdf5(cells, 1, "double", out, "p_r");
    op_dat ep = op_decl_dat_hdf5(cells, 1, "double", out, "results/step1/ecount");
    op_dat flag = op_decl_dat_hdf5(cells, 1, "int", dump, "p_flag");
    op_set tiny = op_decl_set_hdf5(dump, "tiny");
    op_dat dtiny = op_decl_dat_hdf5(tiny, 1, "double", dump, "p_tiny");
    CHECK_OK();
    double got = 0;
    op_fetch_data(dtiny, &got); /* collective; only the last process holds the element */
    CHECK_OK();
    CHECK_DBL(got, rank == p - 1 ? 42.5 : 0.0);
    double *b = malloc(sizeof(double) * (size_t)(nc + 1));
    int *fb = malloc(sizeof(int) * (size_t)(nc + 1));
    op_fetch_data(r, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_sum(&g, c0 + i));
    op_fetch_data(ro, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_sum(&g, c0 + i));
    op_fetch_data(e, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_edges(&g, c0 + i));
    op_fetch_data(ep, b);
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_edges(&g, c0 + i));
    op_fetch_data(flag, fb);
    for (i = 0; i < nc; i++) CHECK_INT(fb[i], 3 * (c0 + i) - 7);
    /* the dumped maps and coordinates give the same sums again (BLOCK: as declared) */
    op_partition("BLOCK", NULL, cells, pecell, x);
    op_dat r2 = op_decl_dat(cells, 1, "double", NULL, "p_r2");
    sum_loop(op_decl_kernel(k_sum, "sum"), cells, pcell, x, r2);
    op_fetch_data(r2, b);
    CHECK_OK();
    for (i = 0; i < nc; i++) CHECK_DBL(b[i], want_sum(&g, c0 + i));
    free(b);
    free(fb);
  }
  op_exit();
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
