/* A loop chain under MPI (issue 23, point 10): on seq and threads it is sparse-tiled, the
 * elements that depend on halos (or write rows a neighbour imports) deferred to run after the
 * tiles, loop by loop with the halo exchanges; results equal the hand-computed (eager) values
 * at every process count, and op_timing_output's chain row says how many elements were
 * deferred (tiny tiles and OP2_TILE_VERIFY=1: every tiling is checked by simulation).
 * The chain: edges read u through pecell (u dirty: an exchange) and write w; cells double u
 * (a row a neighbour imports must keep its old value for that exchange); edges increment na on
 * nodes through pedge (the exec halo runs) reading the new u (a second exchange); cells sum
 * and max u (reductions over owned cells only).
 * mpi-backends: seq threads check opencl
 * mpi-n: 1 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_init = "void init(const int *i, double *u) { *u = *i; }\n";
static const char *k_zero = "void zero(double *a) { *a = 0.0; }\n";
static const char *k_rw = "void rw(const double *a, const double *b, double *w) { *w = *a - 3.0 * *b; }\n";
static const char *k_dbl = "void dbl(double *u) { *u = 2.0 * *u + 1.0; }\n";
static const char *k_inc =
    "void inc(const double *w, const double *u0, const double *u1, double *a, double *b) { *a += *w + *u0; *b += *w - *u1; }\n";
static const char *k_red = "void red(const double *u, double *s, double *m) { *s += *u; if (*u > *m) *m = *u; }\n";

static void timing(void) { op_timing_output(); }

int main(int argc, char **argv)
{
  grid g;
  int rank, p, e, c, n;
  MPI_Init(&argc, &argv);
  setenv("OP2_TILE_SIZE", "8", 1);
  setenv("OP2_TILE_VERIFY", "1", 1);
  const char *backend = test_init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  grid_make(&g, 24, 20);
  int n0 = block_lo(g.nnode, rank, p), e0 = block_lo(g.nedge, rank, p);
  op_set cells = op_decl_set(block_n(g.ncell, rank, p), "cells");
  op_set nodes = op_decl_set(block_n(g.nnode, rank, p), "nodes");
  op_set edges = op_decl_set(block_n(g.nedge, rank, p), "edges");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_map pedge = op_decl_map(edges, nodes, 2, g.enode + 2 * e0, "pedge");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat u = op_decl_dat(cells, 1, "double", NULL, "u");
  op_dat na = op_decl_dat(nodes, 1, "double", NULL, "na");
  op_dat w = op_decl_dat(edges, 1, "double", NULL, "w");
  (void)x;
  op_partition("BLOCK", NULL, cells, OP_ID, NULL);
  op_kernel kinit = op_decl_kernel(k_init, "init"), kzero = op_decl_kernel(k_zero, "zero");
  op_kernel krw = op_decl_kernel(k_rw, "rw"), kdbl = op_decl_kernel(k_dbl, "dbl");
  op_kernel kinc = op_decl_kernel(k_inc, "inc"), kred = op_decl_kernel(k_red, "red");

  for (int round = 0; round < 2; round++) {
    double sum = 0.0, max = -1.0;
    /* u = global cell index: dirty before the chain */
    PAR_LOOP(kinit, "init", cells, op_arg_idx(-1, OP_ID), op_arg_dat(u, -1, OP_ID, 1, "double", OP_WRITE));
    op_loop_chain_begin("c880");
    PAR_LOOP(kzero, "zero", nodes, op_arg_dat(na, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(krw, "rw", edges, op_arg_dat(u, 0, pecell, 1, "double", OP_READ),
             op_arg_dat(u, 1, pecell, 1, "double", OP_READ), op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(kdbl, "dbl", cells, op_arg_dat(u, -1, OP_ID, 1, "double", OP_RW));
    PAR_LOOP(kinc, "inc", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(u, 0, pecell, 1, "double", OP_READ), op_arg_dat(u, 1, pecell, 1, "double", OP_READ),
             op_arg_dat(na, 0, pedge, 1, "double", OP_INC), op_arg_dat(na, 1, pedge, 1, "double", OP_INC));
    PAR_LOOP(kred, "red", cells, op_arg_dat(u, -1, OP_ID, 1, "double", OP_READ),
             op_arg_gbl(&sum, 1, "double", OP_INC), op_arg_gbl(&max, 1, "double", OP_MAX));
    op_loop_chain_end();

    /* by hand: w = c0 - 3 c1; u' = 2c + 1; na[n] = sum of (w + u'[c0]) over edges with n first
     * and (w - u'[c1]) over edges with n second */
    double *nav = (double *)calloc((size_t)g.nnode, sizeof(double));
    double *got = (double *)malloc(sizeof(double) * (size_t)(g.nedge + g.nnode + g.ncell));
    for (e = 0; e < g.nedge; e++) {
      int a = g.ecell[2 * e], b = g.ecell[2 * e + 1];
      double we = a - 3.0 * b;
      nav[g.enode[2 * e]] += we + (2.0 * a + 1.0);
      nav[g.enode[2 * e + 1]] += we - (2.0 * b + 1.0);
    }
    op_fetch_data_idx(w, got, 0, g.nedge - 1);
    for (e = 0; e < g.nedge; e++) CHECK_DBL(got[e], g.ecell[2 * e] - 3.0 * g.ecell[2 * e + 1]);
    op_fetch_data_idx(u, got, 0, g.ncell - 1);
    for (c = 0; c < g.ncell; c++) CHECK_DBL(got[c], 2.0 * c + 1.0);
    op_fetch_data_idx(na, got, 0, g.nnode - 1);
    for (n = 0; n < g.nnode; n++) CHECK_DBL(got[n], nav[n]);
    CHECK_DBL(sum, (double)g.ncell * g.ncell); /* sum of 2c + 1 */
    CHECK_DBL(max, 2.0 * (g.ncell - 1) + 1.0);
    free(nav);
    free(got);
  }

  /* seq and threads tile the chain; under MPI its row says how many elements were deferred */
  char *t = test_stdout_of(timing);
  if (rank == 0 && (!strcmp(backend, "seq") || !strcmp(backend, "threads"))) {
    const char *rows = strstr(t, "op2 loop chains");
    const char *row = rows != NULL ? strstr(rows, "chain:c880 ") : NULL;
    CHECK(row != NULL);
    if (row != NULL && p > 1) {
      const char *d = strstr(row, "MPI: ");
      long long deferred = -1;
      CHECK(d != NULL && sscanf(d, "MPI: %lld elements deferred", &deferred) == 1);
      CHECK(deferred > 0);
    }
  }
  free(t);
  op_exit();
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
