/* Issue 9, point 5 (and the contract's kernel environment): every identifier op2 generates starts
 * with op2_, so constants named like the wrapper's old locals (src, n, start, end, slots, k, a0,
 * g1, m0, v1, x2) work; kernels are ISO C, so names that GNU C's libc headers take (gamma, index,
 * y1, j0) are free; a loop name containing the end of a C comment does not break the generated
 * code; kernels see MIN, MAX, M_PI, <stdint.h>, <string.h>, <stdbool.h>, <stdio.h>; an `inline`
 * kernel links. */
#include "test.h"

static const char *names[] = {"src", "n", "start", "end", "slots", "k", "a0", "g1", "m0",
                              "v1", "x2", "gamma", "index", "y1", "j0"};

int main(int argc, char **argv)
{
  enum { N = 5 };
  int i;
  double xs[N] = {1, 2, 3, 4, 5}, out[N];
  int e2n[2 * N];
  test_init(argc, argv);
  for (i = 0; i < COUNT_OF(names); i++) {
    double v = (double)(i + 1);
    op_decl_const(1, "double", &v, names[i]);
  }
  for (i = 0; i < N; i++) {
    e2n[2 * i] = i;
    e2n[2 * i + 1] = (i + 1) % N;
  }
  {
    op_set nodes = op_decl_set(N, "nodes");
    op_set edges = op_decl_set(N, "edges");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_dat x = op_decl_dat(nodes, 1, "double", xs, "x");
    op_dat y = op_decl_dat(nodes, 1, "double", NULL, "y");
    op_dat z = op_decl_dat(edges, 1, "double", NULL, "z");
    double total = 0;
    int idx = 0;
    /* Uses every constant; sum of 1..15 = 120. */
    op_kernel use_all = op_decl_kernel(
        "#include <stdint.h>\n"
        "inline void use_all(const double *x, double *y, const int *e, double *t) {\n"
        "  int32_t i32 = (int32_t)*e; bool yes = true; char buf[4]; memset(buf, 0, sizeof buf);\n"
        "  (void)buf;\n"
        "  double s = src + n + start + end + slots + k + a0 + g1 + m0 + v1 + x2\n"
        "           + gamma + index + y1 + j0;\n"
        "  if (s < 0) printf(\"never %d\\n\", i32);\n"
        "  y[0] = MAX(x[0], 2.0) * s + MIN(i32, 0) + (yes ? 0 : 1) + (M_PI > 3.14 ? 0 : 100);\n"
        "  *t += y[0];\n"
        "}\n",
        "use_all");
    op_kernel edge = op_decl_kernel("static inline double twice(double a) { return 2 * a; }\n"
                                    "void edge(double **v, double *z) { z[0] = twice(v[0][0]) + v[1][0]; }\n",
                                    "edge");
    PAR_LOOP(use_all, "names */ in /* the loop name */", nodes,
             op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE), op_arg_idx(-1, OP_ID),
             op_arg_gbl(&total, 1, "double", OP_INC));
    op_fetch_data(y, out);
    for (i = 0; i < N; i++) CHECK_DBL(out[i], (xs[i] > 2.0 ? xs[i] : 2.0) * 120.0);
    CHECK_DBL(total, (2.0 + 2.0 + 3.0 + 4.0 + 5.0) * 120.0);
    PAR_LOOP(edge, "edge", edges, op_arg_dat(x, -2, pe, 1, "double", OP_READ),
             op_arg_dat(z, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(z, out);
    for (i = 0; i < N; i++) CHECK_DBL(out[i], 2 * xs[i] + xs[(i + 1) % N]);
    (void)idx;
  }
  op_exit();
  return 0;
}
