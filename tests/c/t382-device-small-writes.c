/* Issue 34, point 2: a device loop writes its READ globals and its reductions' seed row to the
 * device only when their values changed since the last loop that wrote them (a write from host
 * memory waits for every launch queued before it). Every backend gives the hand-computed values
 * (small integers: exact); on opencl and cuda op_diagnostic_output's "small writes" count:
 *   A  rounds of 5 calls of a direct loop with a READ global w = 2: the first writes once and
 *      the second nothing (with OP2_LAZY=1 the calls become fused units, the global at a new
 *      position in each unit's arguments, a buffer each: the fourth round writes nothing)
 *   B  the same loop with w = 3: one write
 *   C  5 calls of a reduction loop (MIN seeded 1e30, INC seeded 0): one write (the seed row)
 *   D  an indirect loop (OP_INC through a map, so coloured: several launches whose partials
 *      rows carry over from launch to launch) with the same reductions and seeds, 3 calls:
 *      values only (its partials buffer may be larger: a fresh buffer is written)
 *   E  the reduction loop with the MIN seeded 0.5, below every value: one write, and the
 *      result is the seed (a seed that wins must reach every block's row)
 *   F  the reduction loop seeded as in C again: one write. */
#include "test.h"

#define N 1000
#define NN (N / 2 + 1)

static const char *src_scale = "void scale(const double *x, double *y, const double *w) { *y = *w * *x; }\n";
static const char *src_red =
    "void red(const double *x, double *m, double *s) { if (*x < *m) *m = *x; *s += *x; }\n";
static const char *src_edge = "void edge(const double *x, double *r0, double *r1, double *m, double *s)\n"
                              "{ *r0 += *x; *r1 += 1.0; if (*x < *m) *m = *x; *s += 2.0 * *x; }\n";

static long long writes_now(int device)
{
  char *out;
  const char *at;
  long long n;
  if (!device) return 0;
  out = test_stdout_of(op_diagnostic_output);
  at = strstr(out, "small writes (READ globals, reduction seeds): ");
  n = at ? atoll(at + strlen("small writes (READ globals, reduction seeds): ")) : -1;
  free(out);
  return n;
}

int main(int argc, char **argv)
{
  char token[64];
  double x0[N], y[N], zero[NN], r[NN], want_r[NN], w, m, s;
  int c2n[2 * N], i, it, round, device, counted, lazy;
  long long before;
  if (argc < 2) return 2;
  device = strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0;
  counted = device && getenv("OP2_VALIDATE") == NULL;
  lazy = getenv("OP2_LAZY") != NULL && strcmp(getenv("OP2_LAZY"), "1") == 0;
  for (i = 0; i < N; i++) {
    x0[i] = (double)(1 + (i * 37) % 101);
    c2n[2 * i] = i / 2;
    c2n[2 * i + 1] = (i / 2 + 1) % NN;
  }
  for (i = 0; i < NN; i++) zero[i] = want_r[i] = 0.0;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens("t382", token, (const char *)NULL);
  {
    op_set cells = op_decl_set(N, "cells"), nodes = op_decl_set(NN, "nodes");
    op_map pcn = op_decl_map(cells, nodes, 2, c2n, "pcn");
    op_dat dx = op_decl_dat(cells, 1, "double", x0, "x"), dy = op_decl_dat(cells, 1, "double", NULL, "y");
    op_dat dr = op_decl_dat(nodes, 1, "double", zero, "r");
    op_kernel kscale = op_decl_kernel(src_scale, "scale"), kred = op_decl_kernel(src_red, "red");
    op_kernel kedge = op_decl_kernel(src_edge, "edge");
    double xmin = 1e30, xsum = 0.0;
    for (i = 0; i < N; i++) {
      if (x0[i] < xmin) xmin = x0[i];
      xsum += x0[i];
    }

    /* A */
    w = 2.0;
    for (round = 0; round < 4; round++) {
      before = writes_now(device);
      for (it = 0; it < 5; it++) {
        PAR_LOOP(kscale, "scale", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
                 op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE), op_arg_gbl(&w, 1, "double", OP_READ));
        CHECK_OK();
      }
      if (counted && round == 0) CHECK(lazy ? writes_now(device) - before >= 1 : writes_now(device) - before == 1);
      if (counted && (lazy ? round == 3 : round >= 1)) CHECK_INT((int)(writes_now(device) - before), 0);
    }
    op_fetch_data(dy, y);
    for (i = 0; i < N; i++) CHECK_DBL(y[i], 2.0 * x0[i]);

    /* B */
    w = 3.0;
    before = writes_now(device);
    PAR_LOOP(kscale, "scale", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE), op_arg_gbl(&w, 1, "double", OP_READ));
    CHECK_OK();
    if (counted) CHECK_INT((int)(writes_now(device) - before), 1);
    op_fetch_data(dy, y);
    for (i = 0; i < N; i++) CHECK_DBL(y[i], 3.0 * x0[i]);

    /* C */
    before = writes_now(device);
    for (it = 0; it < 5; it++) {
      m = 1e30;
      s = 0.0;
      PAR_LOOP(kred, "red", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_gbl(&m, 1, "double", OP_MIN), op_arg_gbl(&s, 1, "double", OP_INC));
      CHECK_OK();
      CHECK_DBL(m, xmin);
      CHECK_DBL(s, xsum);
    }
    if (counted) CHECK_INT((int)(writes_now(device) - before), 1);

    /* D */
    for (it = 0; it < 3; it++) {
      m = 1e30;
      s = 0.0;
      PAR_LOOP(kedge, "edge", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
               op_arg_dat(dr, 0, pcn, 1, "double", OP_INC), op_arg_dat(dr, 1, pcn, 1, "double", OP_INC),
               op_arg_gbl(&m, 1, "double", OP_MIN), op_arg_gbl(&s, 1, "double", OP_INC));
      CHECK_OK();
      CHECK_DBL(m, xmin);
      CHECK_DBL(s, 2.0 * xsum);
      for (i = 0; i < N; i++) {
        want_r[c2n[2 * i]] += x0[i];
        want_r[c2n[2 * i + 1]] += 1.0;
      }
    }
    op_fetch_data(dr, r);
    for (i = 0; i < NN; i++) CHECK_DBL(r[i], want_r[i]);

    /* E */
    before = writes_now(device);
    m = 0.5;
    s = 0.0;
    PAR_LOOP(kred, "red", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
             op_arg_gbl(&m, 1, "double", OP_MIN), op_arg_gbl(&s, 1, "double", OP_INC));
    CHECK_OK();
    CHECK_DBL(m, 0.5);
    CHECK_DBL(s, xsum);
    if (counted) CHECK_INT((int)(writes_now(device) - before), 1);

    /* F */
    before = writes_now(device);
    m = 1e30;
    s = 0.0;
    PAR_LOOP(kred, "red", cells, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
             op_arg_gbl(&m, 1, "double", OP_MIN), op_arg_gbl(&s, 1, "double", OP_INC));
    CHECK_OK();
    CHECK_DBL(m, xmin);
    CHECK_DBL(s, xsum);
    if (counted) CHECK_INT((int)(writes_now(device) - before), 1);
  }
  op_exit();
  return 0;
}
