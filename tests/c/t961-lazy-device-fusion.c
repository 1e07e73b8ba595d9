/* Issue 23, point 10: device backends fuse a chain's direct loops into one launch.
 * The chain, every loop over cells (N of them, nodes N/2 + 1):
 *   first   b = (a * w, a + 1)           direct, READ global w      \
 *   second  c = b[0] - b[1] + index      direct, op_arg_idx          > one launch
 *   gather  d = x[n0] + 2 x[n1] + c      x read through a map       /
 *   scatter r[n0] += d, r[n1] += 1       OP_INC through a map: alone (between direct loops)
 *   third   c += d                       direct                     \ one launch
 *   nbr     f = 3 e[prev]                e read through a map       /
 *   over    e += c                       direct, but overwrites what nbr read through a map
 *   last    a = f - e - a                direct                     > one launch with over
 * Every backend gives the hand-computed values (exact: small integers); on opencl (and cuda)
 * with OP2_INC=atomics, the chain is 4 launches (op_diagnostic_output's "kernel launches"),
 * 8 with OP2_FUSE=0 and eagerly, and the dats move as eagerly (op_dat_transfers). The last
 * iteration is counted: on a device the first runs each loop at its call (compiling its code). */
#include "test.h"

#define N 64
#define NN (N / 2 + 1)
#define ITERS 3

static const char *src_first = "void first(const double *a, double *b, const double *w) { b[0] = *a * *w; b[1] = *a + 1.0; }\n";
static const char *src_second = "void second(const double *b, double *c, const int *i) { *c = b[0] - b[1] + *i; }\n";
static const char *src_gather =
    "void gather(const double *x0, const double *x1, const double *c, double *d) { *d = *x0 + 2.0 * *x1 + *c; }\n";
static const char *src_scatter = "void scatter(const double *d, double *r0, double *r1) { *r0 += *d; *r1 += 1.0; }\n";
static const char *src_third = "void third(double *c, const double *d) { *c += *d; }\n";
static const char *src_nbr = "void nbr(const double *e, double *f) { *f = 3.0 * *e; }\n";
static const char *src_over = "void over(double *e, const double *c) { *e += *c; }\n";
static const char *src_last = "void last(double *a, const double *f, const double *e) { *a = *f - *e - *a; }\n";

static long long launches_now(void)
{
  char *out = test_stdout_of(op_diagnostic_output);
  const char *at = strstr(out, "kernel launches: ");
  long long n = at ? atoll(at + strlen("kernel launches: ")) : -1;
  free(out);
  return n;
}

/* One run: ITERS iterations, each a chain when `chain`; checks the values; returns the launches
 * of the last iteration (-1 on a host backend) and the dats' transfers in `moves`. */
static long long run(const char *backend, int chain, const char *fuse, long long moves[8][2])
{
  char token[64];
  double a0[N], e0[N], x0[NN], zero[N], w = 3.0;
  double a[N], e[N], r[NN], c[N], d[N], f[N], got[N];
  int c2n[2 * N], prev[N], i, it, device = strcmp(backend, "opencl") == 0 || strcmp(backend, "cuda") == 0;
  long long launches = -1, before = 0;
  for (i = 0; i < N; i++) {
    a0[i] = a[i] = (double)(i % 7);
    e0[i] = e[i] = (double)(i % 3);
    zero[i] = 0.0;
    c2n[2 * i] = i / 2;
    c2n[2 * i + 1] = (i / 2 + 1) % NN;
    prev[i] = (i + N - 1) % N;
  }
  for (i = 0; i < NN; i++) {
    x0[i] = (double)(i % 5);
    r[i] = 0.0;
  }
  /* The chain by hand. */
  for (it = 0; it < ITERS; it++) {
    for (i = 0; i < N; i++) c[i] = a[i] * 3.0 - (a[i] + 1.0) + i;
    for (i = 0; i < N; i++) d[i] = x0[c2n[2 * i]] + 2.0 * x0[c2n[2 * i + 1]] + c[i];
    for (i = 0; i < N; i++) {
      r[c2n[2 * i]] += d[i];
      r[c2n[2 * i + 1]] += 1.0;
    }
    for (i = 0; i < N; i++) c[i] += d[i];
    for (i = 0; i < N; i++) f[i] = 3.0 * e[prev[i]];
    for (i = 0; i < N; i++) e[i] += c[i];
    for (i = 0; i < N; i++) a[i] = f[i] - e[i] - a[i];
  }

  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  test_init_tokens("t961", token, "OP2_INC=atomics", fuse, (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells"), nodes = op_decl_set(NN, "nodes");
    op_map pcn = op_decl_map(cells, nodes, 2, c2n, "pcn"), pprev = op_decl_map(cells, cells, 1, prev, "pprev");
    op_dat da = op_decl_dat(cells, 1, "double", a0, "a"), db = op_decl_dat(cells, 2, "double", NULL, "b");
    op_dat dc = op_decl_dat(cells, 1, "double", zero, "c"), dd = op_decl_dat(cells, 1, "double", zero, "d");
    op_dat de = op_decl_dat(cells, 1, "double", e0, "e"), df = op_decl_dat(cells, 1, "double", zero, "f");
    op_dat dx = op_decl_dat(nodes, 1, "double", x0, "x"), dr = op_decl_dat(nodes, 1, "double", zero, "r");
    op_dat all[8];
    op_kernel k1 = op_decl_kernel(src_first, "first"), k2 = op_decl_kernel(src_second, "second");
    op_kernel k3 = op_decl_kernel(src_gather, "gather"), k4 = op_decl_kernel(src_scatter, "scatter");
    op_kernel k5 = op_decl_kernel(src_third, "third"), k6 = op_decl_kernel(src_nbr, "nbr");
    op_kernel k7 = op_decl_kernel(src_over, "over"), k8 = op_decl_kernel(src_last, "last");
    all[0] = da, all[1] = db, all[2] = dc, all[3] = dd, all[4] = de, all[5] = df, all[6] = dx, all[7] = dr;
    for (it = 0; it < ITERS; it++) {
      /* The first iteration runs each loop at its call on a device (its code is compiled then). */
      if (device && it == ITERS - 1) before = launches_now();
      if (chain) op_loop_chain_begin("fuse");
      PAR_LOOP(k1, "first", cells, op_arg_dat(da, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(db, -1, OP_ID, 2, "double", OP_WRITE), op_arg_gbl(&w, 1, "double", OP_READ));
      PAR_LOOP(k2, "second", cells, op_arg_dat(db, -1, OP_ID, 2, "double", OP_READ),
               op_arg_dat(dc, -1, OP_ID, 1, "double", OP_WRITE), op_arg_idx(-1, OP_ID));
      PAR_LOOP(k3, "gather", cells, op_arg_dat(dx, 0, pcn, 1, "double", OP_READ),
               op_arg_dat(dx, 1, pcn, 1, "double", OP_READ), op_arg_dat(dc, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dd, -1, OP_ID, 1, "double", OP_WRITE));
      PAR_LOOP(k4, "scatter", cells, op_arg_dat(dd, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dr, 0, pcn, 1, "double", OP_INC), op_arg_dat(dr, 1, pcn, 1, "double", OP_INC));
      PAR_LOOP(k5, "third", cells, op_arg_dat(dc, -1, OP_ID, 1, "double", OP_RW),
               op_arg_dat(dd, -1, OP_ID, 1, "double", OP_READ));
      PAR_LOOP(k6, "nbr", cells, op_arg_dat(de, 0, pprev, 1, "double", OP_READ),
               op_arg_dat(df, -1, OP_ID, 1, "double", OP_WRITE));
      PAR_LOOP(k7, "over", cells, op_arg_dat(de, -1, OP_ID, 1, "double", OP_RW),
               op_arg_dat(dc, -1, OP_ID, 1, "double", OP_READ));
      PAR_LOOP(k8, "last", cells, op_arg_dat(da, -1, OP_ID, 1, "double", OP_RW),
               op_arg_dat(df, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(de, -1, OP_ID, 1, "double", OP_READ));
      if (chain) op_loop_chain_end();
      CHECK_OK();
      if (device && it == ITERS - 1) launches = launches_now() - before;
    }
    op_fetch_data(da, got);
    for (i = 0; i < N; i++) CHECK_DBL(got[i], a[i]);
    op_fetch_data(de, got);
    for (i = 0; i < N; i++) CHECK_DBL(got[i], e[i]);
    op_fetch_data(dc, got);
    for (i = 0; i < N; i++) CHECK_DBL(got[i], c[i]);
    op_fetch_data(dr, got);
    for (i = 0; i < NN; i++) CHECK_DBL(got[i], r[i]);
    for (i = 0; i < 8; i++) op_dat_transfers(all[i], &moves[i][0], &moves[i][1]);
  }
  op_exit();
  return launches;
}

int main(int argc, char **argv)
{
  long long eager[8][2], fused[8][2], unfused[8][2], n_eager, n_fused, n_unfused;
  int i, device;
  const char *backend;
  if (argc < 2) return 2;
  backend = argv[1];
  device = strcmp(backend, "opencl") == 0 || strcmp(backend, "cuda") == 0;
  n_eager = run(backend, 0, "OP2_FUSE=1", eager);
  n_fused = run(backend, 1, "OP2_FUSE=1", fused);
  n_unfused = run(backend, 1, "OP2_FUSE=0", unfused);
  for (i = 0; i < 8; i++) {
    CHECK_INT(fused[i][0], eager[i][0]);
    CHECK_INT(fused[i][1], eager[i][1]);
    CHECK_INT(unfused[i][0], eager[i][0]);
    CHECK_INT(unfused[i][1], eager[i][1]);
  }
  /* Validation runs every loop at its call: nothing is chained or fused. OP2_LAZY=1 queues the
   * unchained run too (op_diagnostic_output runs its queue, fused). */
  if (device && getenv("OP2_VALIDATE") == NULL) {
    const char *lazy = getenv("OP2_LAZY");
    CHECK_INT((int)n_eager, lazy && strcmp(lazy, "1") == 0 ? 4 : 8);
    CHECK_INT((int)n_fused, 4);
    CHECK_INT((int)n_unfused, 8);
  }
  return 0;
}
