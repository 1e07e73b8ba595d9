/* OP2_SIMD=auto (the default): the first calls of a loop time both wrappers, then one is kept;
 * op_timing_output names the choice with both times. Whichever wrapper runs a call, results
 * are bit for bit those of the scalar twin (the same body, made non-vectorisable). */
#include "test.h"

#include <unistd.h>

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)
#define PARAMS (const double *x, const double *q, double *a)
#define BODY                                                                                       \
  double u = q[1] / q[0], v = q[2] / q[0];                                                         \
  double c = sqrt(fabs(q[3] - 0.5 * (u * u + v * v)));                                             \
  *a = fabs(u * x[1] - v * x[0]) + c * sqrt(x[0] * x[0] + x[1] * x[1]);

static const char *src_dt = "void dt" STR(PARAMS) "\n{\n" STR(BODY) "\n}\n";
static const char *src_twin = "void twin" STR(PARAMS) "\n{\n  const double *alias = x;\n" STR(BODY) "\n  (void)alias;\n}\n";

#define N 200000
#define NN 1000

int main(int argc, char **argv)
{
  static int emap[N];
  static double xv[2 * NN], qv[4 * N], a1[N], a2[N];
  char token[64], *out;
  int e, it;
  op_set nodes, cells;
  op_map m;
  op_dat dx, dq, da1, da2;
  op_kernel kdt, ktwin;

  if (argc < 2) return 2;
  {
    /* A private cache: a verdict kept by an earlier run (t702) would skip the timing. */
    static char cache[] = "/tmp/op2-t701-XXXXXX";
    static char tok_c[128];
    CHECK(mkdtemp(cache) != NULL);
    snprintf(tok_c, sizeof tok_c, "OP2_CACHE_DIR=%s", cache);
    snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
    test_init_tokens(argv[0], token, tok_c, "OP2_SIMD=auto", (const char *)NULL);
  }
  CHECK_OK();
  for (e = 0; e < N; e++) {
    emap[e] = (int)((31L * e) % NN);
    qv[4 * e] = 1.0 + 0.001 * (e % 89);
    qv[4 * e + 1] = 0.01 * (e % 17);
    qv[4 * e + 2] = -0.02 * (e % 11);
    qv[4 * e + 3] = 2.5 + 0.003 * (e % 7);
  }
  for (e = 0; e < NN; e++) {
    xv[2 * e] = 0.1 + 0.001 * e;
    xv[2 * e + 1] = 0.2 - 0.0007 * e;
  }
  nodes = op_decl_set(NN, "nodes");
  cells = op_decl_set(N, "cells");
  m = op_decl_map(cells, nodes, 1, emap, "m");
  dx = op_decl_dat(nodes, 2, "double", xv, "x");
  dq = op_decl_dat(cells, 4, "double", qv, "q");
  da1 = op_decl_dat(cells, 1, "double", NULL, "a1");
  da2 = op_decl_dat(cells, 1, "double", NULL, "a2");
  kdt = op_decl_kernel(src_dt, "dt");
  ktwin = op_decl_kernel(src_twin, "twin");
  CHECK_OK();
  for (it = 0; it < 10; it++) {
    PAR_LOOP(kdt, "dt", cells, op_arg_dat(dx, 0, m, 2, "double", OP_READ),
             op_arg_dat(dq, -1, OP_ID, 4, "double", OP_READ), op_arg_dat(da1, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(ktwin, "twin", cells, op_arg_dat(dx, 0, m, 2, "double", OP_READ),
             op_arg_dat(dq, -1, OP_ID, 4, "double", OP_READ), op_arg_dat(da2, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_OK();
    op_fetch_data(da1, a1);
    op_fetch_data(da2, a2);
    if (memcmp(a1, a2, sizeof a1) != 0) test_fail_(__FILE__, __LINE__, "call %d: results differ", it);
  }
  CHECK(a1[0] > 0.0);

  out = test_stdout_of(op_timing_output);
  if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
    /* Device backends run their own code: no host wrapper choice to show. */
    CHECK(strstr(out, "simd:") == NULL);
  } else if (!(strstr(out, "  simd: dt: simd (auto: scalar ") || strstr(out, "  simd: dt: scalar (auto: scalar ")) ||
      strstr(out, "not decided") || !strstr(out, " ns/element, simd ") ||
      !strstr(out, "  simd: twin: scalar (not vectorised: parameter 'x' (kernel line 3) is used other than as x[i] or *x (passed on, compared or in pointer arithmetic))"))
    test_fail_(__FILE__, __LINE__, "op_timing_output does not show the choice:\n%s", out);
  free(out);
  op_exit();
  return 0;
}
