/* op_decl_const: scalars and arrays read by name in kernels; a new value is seen by the next
 * loop (the same kernel and loop again); op_decl_const_char; several types. */
#include "test.h"

static const char *src_use =
    "void use(const int *i, double *out)\n"
    "{\n"
    "  out[0] = gam * qinf[*i % 4] + nsteps;\n"
    "  out[1] = (double)big + (double)fl + eps;\n"
    "}\n";

static const char *src_cnt =
    "void cnt(int *out) { int k; *out = 0; for (k = 0; k < 3; k++) *out += ivec[k] * ivec[k]; }\n";

int main(int argc, char **argv)
{
  double gam = 1.5, qinf[4] = {1.0, 2.0, 4.0, 8.0}, eps = 0.125, out[20];
  int nsteps = 3, ivec[3] = {1, 2, 3}, iv[10], i, c[10];
  long long big = 1LL << 40;
  float fl = 0.25f;
  op_set s;
  op_dat di, dout, dc;
  op_kernel ku, kc;

  test_init(argc, argv);
  for (i = 0; i < 10; i++) iv[i] = i;
  op_decl_const(1, "double", &gam, "gam");
  op_decl_const(4, "double", qinf, "qinf");
  op_decl_const(1, "int", &nsteps, "nsteps");
  op_decl_const(1, "ll", &big, "big");
  op_decl_const(1, "float", &fl, "fl");
  op_decl_const_char(1, "double", (int)sizeof(double), (const char *)&eps, "eps");
  op_decl_const_char(3, "int", (int)sizeof(int), (const char *)ivec, "ivec");
  CHECK_OK();
  /* The constants are copies: changing the caller's variables does nothing by itself. */
  gam = 100.0;
  qinf[0] = 100.0;
  ivec[0] = 100;

  s = op_decl_set(10, "cells");
  di = op_decl_dat(s, 1, "int", iv, "i");
  dout = op_decl_dat(s, 2, "double", NULL, "out");
  dc = op_decl_dat(s, 1, "int", NULL, "c");
  ku = op_decl_kernel(src_use, "use");
  kc = op_decl_kernel(src_cnt, "cnt");

  PAR_LOOP(ku, "use", s, op_arg_dat(di, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(dout, -1, OP_ID, 2, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(dout, out);
  {
    const double q0[4] = {1.0, 2.0, 4.0, 8.0};
    for (i = 0; i < 10; i++) {
      CHECK_DBL(out[2 * i], 1.5 * q0[i % 4] + 3);
      CHECK_DBL(out[2 * i + 1], 1099511627776.0 + 0.25 + 0.125);
    }
  }
  PAR_LOOP(kc, "cnt", s, op_arg_dat(dc, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(dc, c);
  for (i = 0; i < 10; i++) CHECK_INT(c[i], 1 + 4 + 9);

  /* New values: the same loop sees them. */
  gam = -2.0;
  qinf[0] = 0.5;
  qinf[3] = 16.0;
  nsteps = 10;
  eps = 0.5;
  ivec[0] = 4;
  op_decl_const(1, "double", &gam, "gam");
  op_decl_const(4, "double", qinf, "qinf");
  op_decl_const(1, "int", &nsteps, "nsteps");
  op_decl_const_char(1, "double", (int)sizeof(double), (const char *)&eps, "eps");
  op_decl_const(3, "int", ivec, "ivec");
  CHECK_OK();
  PAR_LOOP(ku, "use", s, op_arg_dat(di, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(dout, -1, OP_ID, 2, "double", OP_WRITE));
  op_fetch_data(dout, out);
  {
    const double q1[4] = {0.5, 2.0, 4.0, 16.0};
    for (i = 0; i < 10; i++) {
      CHECK_DBL(out[2 * i], -2.0 * q1[i % 4] + 10);
      CHECK_DBL(out[2 * i + 1], 1099511627776.0 + 0.25 + 0.5);
    }
  }
  PAR_LOOP(kc, "cnt", s, op_arg_dat(dc, -1, OP_ID, 1, "int", OP_WRITE));
  op_fetch_data(dc, c);
  for (i = 0; i < 10; i++) CHECK_INT(c[i], 16 + 4 + 9);

  /* A constant declared after some loops ran is visible to a new kernel. */
  {
    int late = 41;
    op_kernel kl = op_decl_kernel("void lt(int *c) { *c = late + 1; }\n", "lt");
    op_decl_const(1, "int", &late, "late");
    PAR_LOOP(kl, "lt", s, op_arg_dat(dc, -1, OP_ID, 1, "int", OP_WRITE));
    op_fetch_data(dc, c);
    for (i = 0; i < 10; i++) CHECK_INT(c[i], 42);
  }

  op_exit();
  return 0;
}
