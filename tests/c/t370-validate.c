/* Issue 10, point 4: OP2_VALIDATE=1 runs every loop also on seq from the same inputs and
 * compares. Correct loops (direct, indirect increments, reductions) pass on every backend; a
 * kernel that reads an OP_WRITE-only argument is caught (the reference sees it poisoned) with
 * OP2_ERR_VALIDATE naming the loop, argument, dat, element and both values (on check too).
 * The check backend no longer validates unasked: that ran every kernel twice, repeating its
 * side effects (issue 21, point 6; t043 counts them), so seeing a read of an OP_WRITE-only
 * argument takes OP2_VALIDATE=1 there as anywhere. */
#include "test.h"

int main(int argc, char **argv)
{
  enum { N = 1000, E = 999 };
  static double xs[N], out[N];
  static int e2n[2 * E];
  char token[64];
  double sum = 0, mx = -1;
  int i;
  if (argc < 2) return 2;
  for (i = 0; i < N; i++) xs[i] = (double)(i % 17) * 0.25;
  for (i = 0; i < E; i++) e2n[2 * i] = i, e2n[2 * i + 1] = i + 1;
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens(argv[0], token, "OP2_VALIDATE=1", (const char *)NULL);
  {
    op_set nodes = op_decl_set(N, "nodes"), edges = op_decl_set(E, "edges");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_dat x = op_decl_dat(nodes, 1, "double", xs, "x");
    op_dat acc = op_decl_dat(nodes, 1, "double", NULL, "acc");
    op_dat y = op_decl_dat(nodes, 1, "double", NULL, "y");
    op_kernel scat = op_decl_kernel("void scat(const double *a, const double *b, double *p, double *q)\n"
                                    "{ *p += 0.5 * (*a + *b); *q += 0.25 * *a; }\n", "scat");
    op_kernel red = op_decl_kernel("void red(const double *x, double *s, double *m) { *s += *x; if (*x > *m) *m = *x; }\n",
                                   "red");
    op_kernel sneaky = op_decl_kernel("void sneaky(const double *x, double *y) {\n  y[0] = y[0] + x[0];\n}\n",
                                      "sneaky");
    PAR_LOOP(scat, "scat", edges, op_arg_dat(x, 0, pe, 1, "double", OP_READ), op_arg_dat(x, 1, pe, 1, "double", OP_READ),
             op_arg_dat(acc, 0, pe, 1, "double", OP_INC), op_arg_dat(acc, 1, pe, 1, "double", OP_INC));
    CHECK_OK();
    PAR_LOOP(red, "red", nodes, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&sum, 1, "double", OP_INC),
             op_arg_gbl(&mx, 1, "double", OP_MAX));
    CHECK_OK();
    CHECK_DBL(mx, 4.0);
    op_fetch_data(acc, out);
    CHECK_DBL(out[0], 0.5 * (xs[0] + xs[1]) + 0.25 * xs[0]);

    /* Reads y although it is declared OP_WRITE: the reference sees NaN there. */
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(sneaky, "sneaky", nodes, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_VALIDATE, "op_par_loop 'sneaky', arg 1 (dat 'y')", "element 0 component 0", "seq gives", "nan");
  }
  op_exit();
  return 0;
}
