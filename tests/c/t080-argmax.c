/* op_arg_info: a payload that follows a MIN/MAX global, as in Airfoil's update
 * (if (d > *m) { *m = d; *loc = *idx; }). The final payload goes with the winning value. */
#include "test.h"

#define N 1000

static const char *src_argmax =
    "void argmax(const double *v, double *m, int *loc, const int *idx)\n"
    "{\n"
    "  if (*v > *m) { *m = *v; *loc = *idx; }\n"
    "}\n";

/* MAX with a two-int payload at position 2, MIN with a double payload at position 4. */
static const char *src_both =
    "void both(const double *v, double *mx, int *mxloc, double *mn, double *mnval,\n"
    "          const int *idx)\n"
    "{\n"
    "  if (*v > *mx) { *mx = *v; mxloc[0] = *idx; mxloc[1] = 2 * *idx + 1; }\n"
    "  if (*v < *mn) { *mn = *v; *mnval = 0.5 * *idx; }\n"
    "}\n";

static const char *src_iargmin =
    "void iargmin(const int *v, const int *idx, int *m, long long *loc)\n"
    "{\n"
    "  if (*v < *m) { *m = *v; *loc = 1000000000000LL + *idx; }\n"
    "}\n";

int main(int argc, char **argv)
{
  static double v[N];
  static int iv[N];
  double m, mn, mnval;
  int loc, mxloc[2], im, i;
  long long lloc;
  op_set s;
  op_dat dv, div;
  op_kernel ka, kb, ki;

  test_init(argc, argv);
  /* A unique maximum 0 at 637 and a unique minimum at 0 (-(637)^2). */
  for (i = 0; i < N; i++) {
    v[i] = -(double)(i - 637) * (i - 637);
    iv[i] = (i * 389) % N; /* a permutation of 0 .. N-1 with its 0 at i = 0 */
  }
  s = op_decl_set(N, "cells");
  dv = op_decl_dat(s, 1, "double", v, "v");
  div = op_decl_dat(s, 1, "int", iv, "iv");
  ka = op_decl_kernel(src_argmax, "argmax");
  kb = op_decl_kernel(src_both, "both");
  ki = op_decl_kernel(src_iargmin, "iargmin");

  m = -1e300;
  loc = -1;
  PAR_LOOP(ka, "argmax", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&m, 1, "double", OP_MAX), op_arg_info(&loc, 1, "int", 1),
           op_arg_idx(-1, OP_ID));
  CHECK_OK();
  CHECK_DBL(m, 0.0);
  CHECK_INT(loc, 637);

  /* The caller's value wins: the payload keeps the caller's value too. */
  m = 5.0;
  loc = -42;
  PAR_LOOP(ka, "argmax", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&m, 1, "double", OP_MAX), op_arg_info(&loc, 1, "int", 1),
           op_arg_idx(-1, OP_ID));
  CHECK_DBL(m, 5.0);
  CHECK_INT(loc, -42);

  /* Two reductions with payloads in one loop (the info may come before or after other args). */
  m = -1e300;
  mn = 1e300;
  mxloc[0] = mxloc[1] = -1;
  mnval = -1.0;
  PAR_LOOP(kb, "both", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&m, 1, "double", OP_MAX), op_arg_info(mxloc, 2, "int", 1),
           op_arg_gbl(&mn, 1, "double", OP_MIN), op_arg_info(&mnval, 1, "double", 3),
           op_arg_idx(-1, OP_ID));
  CHECK_OK();
  CHECK_DBL(m, 0.0);
  CHECK_INT(mxloc[0], 637);
  CHECK_INT(mxloc[1], 2 * 637 + 1);
  CHECK_DBL(mn, -637.0 * 637.0);
  CHECK_DBL(mnval, 0.0);

  /* MIN on an int, the info arg before its reference, ll payload. */
  im = 1000000;
  lloc = -1;
  PAR_LOOP(ki, "iargmin", s, op_arg_dat(div, -1, OP_ID, 1, "int", OP_READ), op_arg_idx(-1, OP_ID),
           op_arg_gbl(&im, 1, "int", OP_MIN), op_arg_info(&lloc, 1, "ll", 2));
  CHECK_INT(im, 0);
  CHECK_INT(lloc, 1000000000000LL + 0);
  /* Starting at 0, no element is strictly below: the caller's value and payload stand. */
  im = 0;
  lloc = 77;
  PAR_LOOP(ki, "iargmin", s, op_arg_dat(div, -1, OP_ID, 1, "int", OP_READ), op_arg_idx(-1, OP_ID),
           op_arg_gbl(&im, 1, "int", OP_MIN), op_arg_info(&lloc, 1, "ll", 2));
  CHECK_INT(im, 0);
  CHECK_INT(lloc, 77);

  /* Ties: the maximum 3.0 appears at 10, 500 and 900; any of them may win, but the payload must
   * be the location of a winner. */
  {
    double t[N];
    op_dat dt;
    for (i = 0; i < N; i++) t[i] = (i == 10 || i == 500 || i == 900) ? 3.0 : (double)(i % 3);
    dt = op_decl_dat(s, 1, "double", t, "t");
    m = -1.0;
    loc = -1;
    PAR_LOOP(ka, "argmax_ties", s, op_arg_dat(dt, -1, OP_ID, 1, "double", OP_READ),
             op_arg_gbl(&m, 1, "double", OP_MAX), op_arg_info(&loc, 1, "int", 1),
             op_arg_idx(-1, OP_ID));
    CHECK_DBL(m, 3.0);
    CHECK(loc == 10 || loc == 500 || loc == 900);
  }

  /* In an indirect loop: the winning edge's index. */
  {
    enum { NE = 3000 };
    static int e2n[2 * NE];
    op_set edges = op_decl_set(NE, "edges");
    op_map pe;
    op_kernel ke = op_decl_kernel(
        "void emax(const double *a, const double *b, const int *e, double *m, int *loc)\n"
        "{ double d = *a + *b; if (d > *m) { *m = d; *loc = *e; } }\n",
        "emax");
    int best = -1, e;
    double bestv = -1e300;
    for (e = 0; e < NE; e++) {
      e2n[2 * e] = (e * 7) % N;
      e2n[2 * e + 1] = (e * 13 + 5) % N;
      if (v[e2n[2 * e]] + v[e2n[2 * e + 1]] > bestv) {
        bestv = v[e2n[2 * e]] + v[e2n[2 * e + 1]];
        best = e;
      }
    }
    pe = op_decl_map(edges, s, 2, e2n, "pe");
    m = -1e300;
    loc = -1;
    PAR_LOOP(ke, "emax", edges, op_arg_dat(dv, 0, pe, 1, "double", OP_READ),
             op_arg_dat(dv, 1, pe, 1, "double", OP_READ), op_arg_idx(-1, OP_ID),
             op_arg_gbl(&m, 1, "double", OP_MAX), op_arg_info(&loc, 1, "int", 3));
    CHECK_DBL(m, bestv);
    CHECK(loc >= 0 && loc < NE);
    CHECK_DBL(v[e2n[2 * loc]] + v[e2n[2 * loc + 1]], bestv);
    (void)best;
  }

  op_exit();
  return 0;
}
