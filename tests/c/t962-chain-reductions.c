/* Reductions into one variable inside a loop chain (issue #37, point 10): each loop's result
 * reaches the caller's memory as if the loops had run eagerly, one after the other.
 * - two OP_INC loops into `same` (a sum over one dat, then over another) leave
 *   1 + sum(2x) + sum(10x), not 1 + sum(10x);
 * - OP_MIN and OP_MAX into one variable each (the first loop's extreme wins), with an
 *   op_arg_info payload that follows the winner; an int OP_INC over two sets;
 * - mixed: an OP_READ of `same` by a later loop sees the first loop's result; a value the
 *   program stores between two loops (Airfoil's rms = 0 before each update) is where the next
 *   loop starts; a value stored after the last loop is what the variable holds at the end;
 * - a flush inside the chain (op_fetch_data) between two loops into one variable.
 * Run on one backend with a chain, with OP2_LAZY=1 and a chain, with OP2_TILE_SIZE=3 (several
 * tiles on seq and threads), and eagerly (the reference). Every value is exact. */
#include "test.h"

#define N 40 /* cells */
#define M 25 /* edges */

static const char *src_sum = "void sum(const double *x, double *s) { *s += *x; }\n";
static const char *src_min = "void vmin(const double *x, double *m) { if (*x < *m) *m = *x; }\n";
static const char *src_max = "void vmax(const double *x, double *m) { if (*x > *m) *m = *x; }\n";
static const char *src_argmin = "void argmin(const double *x, double *m, int *loc, const int *idx)\n"
                                "{ if (*x < *m) { *m = *x; *loc = *idx; } }\n";
static const char *src_count = "void count(int *c) { *c += 1; }\n";
static const char *src_put = "void put(double *y, const double *s) { *y = *s; }\n";

static double sum_of(double k, int n)
{
  return k * (double)n * (n - 1) / 2.0;
}

static void run(const char *backend, const char *mode)
{
  char token[64];
  double p[N], q[N], e[M], y[N], zero[N];
  double same, mn, mx, r, a, b, rr;
  int i, cnt, loc;
  int chain = strcmp(mode, "eager") != 0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  if (!strcmp(mode, "lazy"))
    test_init_tokens("t962", token, "OP2_LAZY=1", (const char *)NULL);
  else if (!strcmp(mode, "tiles"))
    test_init_tokens("t962", token, "OP2_TILE_SIZE=3", (const char *)NULL);
  else
    test_init_tokens("t962", token, (const char *)NULL);
  for (i = 0; i < N; i++) {
    p[i] = 2.0 * i;       /* sum(2x) */
    q[i] = 10.0 * i;      /* sum(10x) */
    zero[i] = 0.0;
  }
  for (i = 0; i < M; i++) e[i] = 100.0 + i;
  op_set cells = op_decl_set(N, "cells"), edges = op_decl_set(M, "edges");
  op_dat dp = op_decl_dat(cells, 1, "double", p, "p");
  op_dat dq = op_decl_dat(cells, 1, "double", q, "q");
  op_dat de = op_decl_dat(edges, 1, "double", e, "e");
  op_dat dy = op_decl_dat(cells, 1, "double", zero, "y");
  op_kernel ksum = op_decl_kernel(src_sum, "sum"), kmin = op_decl_kernel(src_min, "vmin");
  op_kernel kmax = op_decl_kernel(src_max, "vmax"), kargmin = op_decl_kernel(src_argmin, "argmin");
  op_kernel kcount = op_decl_kernel(src_count, "count"), kput = op_decl_kernel(src_put, "put");
  CHECK_OK();

  /* The case: two sums into `same`. */
  same = 1.0;
  if (chain) op_loop_chain_begin("same");
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_q", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(same, 1.0 + sum_of(2.0, N) + sum_of(10.0, N));

  /* MIN and MAX into one variable each, the first loop holding the extreme; an int sum over
     two sets; MIN with a payload: p's minimum (0 at cell 0) beats e's (100). */
  mn = 1000.0;
  mx = -1000.0;
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
  PAR_LOOP(kmin, "min_e", edges, op_arg_dat(de, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mn, 1, "double", OP_MIN));
  PAR_LOOP(kmax, "max_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&mx, 1, "double", OP_MAX));
  PAR_LOOP(kcount, "count_edges", edges, op_arg_gbl(&cnt, 1, "int", OP_INC));
  PAR_LOOP(kargmin, "argmin_e", edges, op_arg_dat(de, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&r, 1, "double", OP_MIN), op_arg_info(&loc, 1, "int", 1), op_arg_idx(-1, OP_ID));
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(mn, 0.0);
  CHECK_DBL(mx, 10.0 * (N - 1));
  CHECK_INT(cnt, 7 + N + M);
  CHECK_DBL(r, 0.0);
  CHECK_INT(loc, 0);

  /* Mixed: sum into `same`; a loop reads it (y = same); a store between two loops is where the
     next starts (the other variable `a` keeps adding up); the last store wins. */
  same = 5.0;
  a = 3.0;
  rr = 50.0;
  if (chain) op_loop_chain_begin("mixed");
  PAR_LOOP(ksum, "sum_p_rr", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&rr, 1, "double", OP_INC));
  rr = 0.0; /* as Airfoil's rms = 0 before each update */
  PAR_LOOP(ksum, "sum_q_rr", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&rr, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_p_a", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&a, 1, "double", OP_INC));
  PAR_LOOP(kput, "put", cells, op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_gbl(&same, 1, "double", OP_READ));
  same = 0.0;
  PAR_LOOP(ksum, "sum_q", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_q_a", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&a, 1, "double", OP_INC));
  b = 2.0;
  PAR_LOOP(ksum, "sum_p_b", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&b, 1, "double", OP_INC));
  b = -4.0; /* after b's last loop: eagerly the store wins */
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(same, sum_of(10.0, N));
  CHECK_DBL(rr, sum_of(10.0, N));
  CHECK_DBL(a, 3.0 + sum_of(2.0, N) + sum_of(10.0, N));
  CHECK_DBL(b, -4.0);
  op_fetch_data(dy, y);
  for (i = 0; i < N; i++) CHECK_DBL(y[i], 5.0 + sum_of(2.0, N));

  /* A flush between two loops into one variable (the fetch runs the first), then a third. */
  same = 1.0;
  if (chain) op_loop_chain_begin("flush");
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  op_fetch_data(dy, y);
  CHECK_DBL(same, 1.0 + sum_of(2.0, N));
  PAR_LOOP(ksum, "sum_q", cells, op_arg_dat(dq, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  PAR_LOOP(ksum, "sum_p", cells, op_arg_dat(dp, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&same, 1, "double", OP_INC));
  if (chain) op_loop_chain_end();
  CHECK_OK();
  CHECK_DBL(same, 1.0 + 2.0 * sum_of(2.0, N) + sum_of(10.0, N));
  op_exit();
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  run(argv[1], "eager");
  run(argv[1], "chain");
  run(argv[1], "lazy");
  run(argv[1], "tiles");
  return 0;
}
