/* Reductions into one variable inside a loop chain under MPI (issue #37, point 10; the
 * one-process twin is tests/c/t962-chain-reductions.c): each loop's reduction is combined across
 * the processes and handed to the caller's memory in loop order, as eagerly, so two OP_INC loops
 * into `same` leave 1 + sum(2c) + sum(10c) over the global cells c; OP_MIN/OP_MAX into one
 * variable each keep the first loop's extreme; an int count over two sets adds up; an
 * op_arg_info payload follows the winning minimum (its global index); a later loop's OP_READ of
 * a reduced variable sees the result; a store between two loops is where the next starts; a
 * store after the last loop wins. The sets are partitioned (op_partition), so on seq and
 * threads the chain is tiled with its deferred part (OP2_TILE_SIZE=8, and 3 in the last mode);
 * each mode: eagerly, a chain, OP2_LAZY=1 with a chain. Every value is exact.
 * mpi-backends: seq threads check opencl
 * mpi-n: 1 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_init = "void init(const int *i, double *p, double *q) { *p = 2.0 * *i; *q = 10.0 * *i; }\n";
static const char *k_sum = "void sum(const double *x, double *s) { *s += *x; }\n";
static const char *k_min = "void vmin(const double *x, double *m) { if (*x < *m) *m = *x; }\n";
static const char *k_max = "void vmax(const double *x, double *m) { if (*x > *m) *m = *x; }\n";
static const char *k_argmin = "void argmin(const double *x, double *m, int *loc, const int *idx)\n"
                              "{ if (*x < *m) { *m = *x; *loc = *idx; } }\n";
static const char *k_count = "void count(int *c) { *c += 1; }\n";
static const char *k_put = "void put(double *y, const double *s) { *y = *s; }\n";
static const char *k_spread = "void spread(const double *a, const double *b, double *w) { *w = *a + *b; }\n";

static double sum_of(double k, int n) { return k * (double)n * (n - 1) / 2.0; }

static void run(const char *backend, const char *mode, grid *g, int rank, int p)
{
  char token[64];
  double same, mn, mx, r, a, b, rr;
  int cnt, loc, c;
  int chain = strcmp(mode, "eager") != 0;
  int N = g->ncell, E = g->nedge;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  if (!strcmp(mode, "lazy"))
    test_init_tokens("t881", token, "OP2_LAZY=1", (const char *)NULL);
  else if (!strcmp(mode, "tiles"))
    test_init_tokens("t881", token, "OP2_TILE_SIZE=3", (const char *)NULL);
  else
    test_init_tokens("t881", token, (const char *)NULL);
  int e0 = block_lo(g->nedge, rank, p);
  op_set cells = op_decl_set(block_n(g->ncell, rank, p), "cells");
  op_set edges = op_decl_set(block_n(g->nedge, rank, p), "edges");
  op_map pecell = op_decl_map(edges, cells, 2, g->ecell + 2 * e0, "pecell");
  op_dat dp = op_decl_dat(cells, 1, "double", NULL, "p");
  op_dat dq = op_decl_dat(cells, 1, "double", NULL, "q");
  op_dat dy = op_decl_dat(cells, 1, "double", NULL, "y");
  op_dat dw = op_decl_dat(edges, 1, "double", NULL, "w");
  op_partition("BLOCK", NULL, cells, OP_ID, NULL);
  op_kernel kinit = op_decl_kernel(k_init, "init"), ksum = op_decl_kernel(k_sum, "sum");
  op_kernel kmin = op_decl_kernel(k_min, "vmin"), kmax = op_decl_kernel(k_max, "vmax");
  op_kernel kargmin = op_decl_kernel(k_argmin, "argmin"), kcount = op_decl_kernel(k_count, "count");
  op_kernel kput = op_decl_kernel(k_put, "put"), kspread = op_decl_kernel(k_spread, "spread");
  CHECK_OK();
  /* p = 2c, q = 10c for the global cell index c; w on edge (c0, c1) = 10 c0 + 2 c1 through the
     halo (the chain's loops depend on an exchange). */
  PAR_LOOP(kinit, "init", cells, op_arg_idx(-1, OP_ID), op_arg_dat(dp, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_dat(dq, -1, OP_ID, 1, "double", OP_WRITE));

  /* The case: two sums into `same`, with an indirect loop between them. */
  same = 1.0;
  if (chain) op_loop_chain_begin("same");
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(kspread, "spread", edges, op_arg_dat(dq, 0, pecell, 1, "double", OP_READ),
           op_arg_dat(dp, 1, pecell, 1, "double", OP_READ), op_arg_dat(dw, -1, OP_ID, 1, "double", OP_WRITE));
  PAR_LOOP(ksum, "sum_q", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(same, 1.0 + sum_of(2.0, N) + sum_of(10.0, N));
  {
    double *got = (double *)malloc(sizeof(double) * (size_t)E);
    op_fetch_data_idx(dw, got, 0, E - 1);
    for (int e = 0; e < E; e++) CHECK_DBL(got[e], 10.0 * g->ecell[2 * e] + 2.0 * g->ecell[2 * e + 1]);
    free(got);
  }

  /* MIN and MAX into one variable each (the first loop holds the extreme), an int count over two
     sets, MIN with its payload (p's minimum 0 at cell 0 beats w's). */
  mn = 1e9;
  mx = -1e9;
  cnt = 7;
  r = 1e9;
  loc = -1;
  if (chain) op_loop_chain_begin("extremes");
  PAR_LOOP(kmin, "min_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mn, 1, "double", OP_MIN));
  PAR_LOOP(kmax, "max_q", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mx, 1, "double", OP_MAX));
  PAR_LOOP(kcount, "count_cells", cells, op_arg_gbl(&cnt, 1, "int", OP_INC));
  PAR_LOOP(kargmin, "argmin_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&r, 1, "double", OP_MIN), op_arg_info(&loc, 1, "int", 1), op_arg_idx(-1, OP_ID));
  PAR_LOOP(kmin, "min_w", edges, op_arg_dat(dw, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mn, 1, "double", OP_MIN));
  PAR_LOOP(kmax, "max_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mx, 1, "double", OP_MAX));
  PAR_LOOP(kcount, "count_edges", edges, op_arg_gbl(&cnt, 1, "int", OP_INC));
  PAR_LOOP(kargmin, "argmin_w", edges, op_arg_dat(dw, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&r, 1, "double", OP_MIN), op_arg_info(&loc, 1, "int", 1), op_arg_idx(-1, OP_ID));
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(mn, 0.0);
  CHECK_DBL(mx, 10.0 * (N - 1));
  CHECK_INT(cnt, 7 + N + E);
  CHECK_DBL(r, 0.0);
  CHECK_INT(loc, 0);

  /* Mixed: a store between two loops (Airfoil's rms = 0), a later READ of a reduced variable,
     a variable that keeps adding up, a store after the last loop. */
  same = 5.0;
  a = 3.0;
  rr = 50.0;
  if (chain) op_loop_chain_begin("mixed");
  PAR_LOOP(ksum, "sum_p_rr", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&rr, 1, "double", OP_INC));
  rr = 0.0;
  PAR_LOOP(ksum, "sum_q_rr", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&rr, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_p_a", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&a, 1, "double", OP_INC));
  PAR_LOOP(kput, "put", cells, op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_gbl(&same, 1, "double", OP_READ));
  PAR_LOOP(ksum, "sum_q_a", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&a, 1, "double", OP_INC));
  b = 2.0;
  PAR_LOOP(ksum, "sum_p_b", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&b, 1, "double", OP_INC));
  b = -4.0;
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(rr, sum_of(10.0, N));
  CHECK_DBL(same, 5.0 + sum_of(2.0, N));
  CHECK_DBL(a, 3.0 + sum_of(2.0, N) + sum_of(10.0, N));
  CHECK_DBL(b, -4.0);
  {
    double *got = (double *)malloc(sizeof(double) * (size_t)N);
    op_fetch_data_idx(dy, got, 0, N - 1);
    for (c = 0; c < N; c++) CHECK_DBL(got[c], 5.0 + sum_of(2.0, N));
    free(got);
  }
  op_exit();
}

int main(int argc, char **argv)
{
  grid g;
  int rank, p;
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  setenv("OP2_TILE_SIZE", "8", 1);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  grid_make(&g, 12, 10);
  run(argv[1], "eager", &g, rank, p);
  run(argv[1], "chain", &g, rank, p);
  run(argv[1], "lazy", &g, rank, p);
  run(argv[1], "tiles", &g, rank, p);
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
