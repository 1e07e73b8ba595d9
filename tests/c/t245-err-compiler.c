/* A host C compiler that cannot be run (OP2_CC) makes the first loop fail with OP2_ERR_COMPILE;
 * the message starts with the call and names the loop, the kernel and the compiler; globals and
 * dats are untouched. */
#include "test.h"

int main(int argc, char **argv)
{
  char backend[256];
  double g = 10.5, v[3] = {1, 2, 3}, out[3];
  int i;
  op_set s;
  op_dat d;
  op_kernel k;

  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  snprintf(backend, sizeof backend, "OP2_BACKEND=%s", argv[1]);
  /* Only host backends compile C with OP2_CC. */
  if (strcmp(argv[1], "seq") != 0 && strcmp(argv[1], "threads") != 0 &&
      strcmp(argv[1], "openmp") != 0)
    return 0;
  test_init_tokens(argv[0], backend, "OP2_CC=/no/such/dir/cc", (const char *)NULL);
  CHECK_OK();
  op_set_error_handler(OP_ERRORS_RETURN);
  s = op_decl_set(3, "cells");
  d = op_decl_dat(s, 1, "double", v, "x");
  /* A kernel no other test uses, so that no cached binary can stand in for the compiler. */
  k = op_decl_kernel("void t245_kernel(double *x, double *g) { *x = 1.0 + 0.245; *g += 1.0; }\n",
                     "t245_kernel");
  PAR_LOOP(k, "t245_loop", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_WRITE),
           op_arg_gbl(&g, 1, "double", OP_INC));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop", "'t245_loop'", "'t245_kernel'", "/no/such/dir/cc");
  CHECK_DBL(g, 10.5);
  op_fetch_data(d, out);
  for (i = 0; i < 3; i++) CHECK_DBL(out[i], v[i]);
  op_exit();
  return 0;
}
