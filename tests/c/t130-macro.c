/* OP_PAR_LOOP counts its op_arg list: loops with 1 to 6 arguments. */
#include "test.h"

#define N 20

int main(int argc, char **argv)
{
  op_set s;
  op_dat a, b, c, d, e;
  op_kernel k1, k2, k3, k4, k5, k6;
  int av[N], out[N], i, sum, mx;

  test_init(argc, argv);
  for (i = 0; i < N; i++) av[i] = i;
  s = op_decl_set(N, "cells");
  a = op_decl_dat(s, 1, "int", av, "a");
  b = op_decl_dat(s, 1, "int", NULL, "b");
  c = op_decl_dat(s, 1, "int", NULL, "c");
  d = op_decl_dat(s, 1, "int", NULL, "d");
  e = op_decl_dat(s, 1, "int", NULL, "e");
  k1 = op_decl_kernel("void k1(int *a) { *a += 1; }\n", "k1");
  k2 = op_decl_kernel("void k2(const int *a, int *b) { *b = 2 * *a; }\n", "k2");
  k3 = op_decl_kernel("void k3(const int *a, const int *b, int *c) { *c = *a + *b; }\n", "k3");
  k4 = op_decl_kernel(
      "void k4(const int *a, const int *b, const int *c, int *d) { *d = *a + *b + *c; }\n", "k4");
  k5 = op_decl_kernel("void k5(const int *a, const int *b, const int *c, const int *d, int *e)\n"
                      "{ *e = *a + *b + *c + *d; }\n",
                      "k5");
  k6 = op_decl_kernel("void k6(const int *a, const int *b, const int *c, const int *d,\n"
                      "        const int *e, int *s)\n"
                      "{ *s += *a + *b + *c + *d + *e; }\n",
                      "k6");

  OP_PAR_LOOP(k1, "k1", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_RW));
  CHECK_OK(); /* a = i + 1 */
  OP_PAR_LOOP(k2, "k2", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(b, -1, OP_ID, 1, "int", OP_WRITE)); /* b = 2(i+1) */
  OP_PAR_LOOP(k3, "k3", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(b, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(c, -1, OP_ID, 1, "int", OP_WRITE)); /* c = 3(i+1) */
  OP_PAR_LOOP(k4, "k4", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(b, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(c, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(d, -1, OP_ID, 1, "int", OP_WRITE)); /* d = 6(i+1) */
  OP_PAR_LOOP(k5, "k5", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(b, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(c, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(d, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(e, -1, OP_ID, 1, "int", OP_WRITE)); /* e = 12(i+1) */
  sum = 5;
  OP_PAR_LOOP(k6, "k6", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(b, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(c, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(d, -1, OP_ID, 1, "int", OP_READ),
              op_arg_dat(e, -1, OP_ID, 1, "int", OP_READ),
              op_arg_gbl(&sum, 1, "int", OP_INC)); /* sum += 24(i+1) */
  CHECK_OK();

  op_fetch_data(e, out);
  for (i = 0; i < N; i++) CHECK_INT(out[i], 12 * (i + 1));
  op_fetch_data(d, out);
  for (i = 0; i < N; i++) CHECK_INT(out[i], 6 * (i + 1));
  CHECK_INT(sum, 5 + 24 * N * (N + 1) / 2);

  /* The macro is an expression statement usable in an unbraced if/else. */
  mx = 0;
  if (N > 0)
    OP_PAR_LOOP(k1, "k1", s, op_arg_dat(a, -1, OP_ID, 1, "int", OP_RW));
  else
    mx = -1;
  CHECK_INT(mx, 0);
  op_fetch_data(a, out);
  for (i = 0; i < N; i++) CHECK_INT(out[i], i + 2);

  op_exit();
  return 0;
}
