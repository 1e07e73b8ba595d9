/* Issue 9, point 6: globals of any size. A 4 MB OP_READ global and a 4 MB OP_INC global (and a
 * 16 MB one, beyond the main thread's stack) work on every backend: no stack array of the
 * global's full dim. The device backends (opencl, cuda) stage arguments in private memory and
 * refuse more than 4096 values with a named error, except opencl's READ globals and dat
 * arguments, which it stages in global memory (t391); reductions stay limited there. */
#include "test.h"

int main(int argc, char **argv)
{
  enum { N = 1000, G = 524288, H = 2097152 };
  double *table = malloc(sizeof(double) * G), *acc = malloc(sizeof(double) * G);
  double *huge = malloc(sizeof(double) * H);
  double out[N];
  int i;
  CHECK(table && acc && huge);
  for (i = 0; i < G; i++) {
    table[i] = (double)(i % 1000);
    acc[i] = 1.0;
  }
  for (i = 0; i < H; i++) huge[i] = 0.0;
  test_init(argc, argv);
  if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
    op_set s = op_decl_set(N, "s");
    op_kernel k = op_decl_kernel("void r(const double *t, double *a) { a[0] += t[524287]; }\n", "r");
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(k, "look", s, op_arg_gbl(table, G, "double", OP_READ), op_arg_gbl(acc, 1, "double", OP_INC));
    if (strcmp(argv[1], "opencl") == 0) {
      op_kernel k2 = op_decl_kernel("void r2(double *a) { a[0] += 1.0; }\n", "r2");
      CHECK_OK();
      CHECK_DBL(acc[0], 1.0 + 287.0 * N);
      PAR_LOOP(k2, "wide", s, op_arg_gbl(acc, G, "double", OP_INC));
      CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop 'wide'", "524288 values", "private memory");
      CHECK_DBL(acc[1], 1.0);
    } else {
      CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop 'look'", "524288 values", "private memory");
      CHECK_DBL(acc[0], 1.0);
    }
    op_exit();
    free(table);
    free(acc);
    free(huge);
    return 0;
  }
  {
    op_set s = op_decl_set(N, "s");
    op_dat y = op_decl_dat(s, 1, "double", NULL, "y");
    op_kernel look = op_decl_kernel("void look(const double *t, double *y, const int *e, double *a) {\n"
                                    "  y[0] = t[(*e * 523) % 524288] + t[524287];\n"
                                    "  a[*e] += 2.0;  a[524287] += 1.0;\n"
                                    "}\n",
                                    "look");
    op_kernel big = op_decl_kernel("void big(const int *e, double *h) { h[*e * 2000] += 1.0; h[2097151] += 0.5; }\n",
                                   "big");
    PAR_LOOP(look, "look", s, op_arg_gbl(table, G, "double", OP_READ),
             op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE), op_arg_idx(-1, OP_ID),
             op_arg_gbl(acc, G, "double", OP_INC));
    op_fetch_data(y, out);
    for (i = 0; i < N; i++) CHECK_DBL(out[i], (double)(((i * 523) % G) % 1000) + 287.0);
    for (i = 0; i < N; i++) CHECK_DBL(acc[i], 3.0);
    for (i = N; i < G - 1; i++)
      if (acc[i] != 1.0) CHECK_DBL(acc[i], 1.0);
    CHECK_DBL(acc[G - 1], 1.0 + N);
    PAR_LOOP(big, "big", s, op_arg_idx(-1, OP_ID), op_arg_gbl(huge, H, "double", OP_INC));
    for (i = 0; i < N; i++) CHECK_DBL(huge[i * 2000], 1.0);
    CHECK_DBL(huge[H - 1], 0.5 * N);
  }
  op_exit();
  free(table);
  free(acc);
  free(huge);
  return 0;
}
