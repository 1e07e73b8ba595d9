/* Direct loops: WRITE, RW, READ, several dats of every type in one loop, sets of size 0 and 1. */
#include "test.h"

#define N 1000

static const char *src_write =
    "void fill(const double *a, int *b)\n"
    "{\n"
    "  b[0] = (int)(a[0] + a[1]);\n"
    "  b[1] = (int)(a[0] - a[1]);\n"
    "}\n";

static const char *src_rw =
    "static double twice(double x) { return 2.0 * x; } /* a helper function */\n"
    "void upd(double *a)\n"
    "{\n"
    "  a[0] = twice(a[0]);\n"
    "  a[1] += 1.0;\n"
    "}\n";

static const char *src_many =
    "void many(const double *a, const int *b, float *c, unsigned *u, long long *l,\n"
    "          unsigned long long *ul, _Bool *bo, int *count)\n"
    "{\n"
    "  c[0] = (float)a[0]; c[1] = (float)b[1]; c[2] = 0.5f;\n"
    "  *u = *u * 2u + 1u;\n"
    "  *l = *l * 1000LL - 1;\n"
    "  *ul = *ul + 10000000000ULL;\n"
    "  *bo = !*bo;\n"
    "  *count += 1;\n"
    "}\n";

int main(int argc, char **argv)
{
  op_set s, s1, s0;
  op_dat a, b, c, u, l, ul, bo, a1, a0;
  op_kernel kfill, kupd, kmany;
  double av[2 * N], aout[2 * N];
  int bout[2 * N], i, count;
  float cout[3 * N];
  unsigned uv[N], uout[N];
  long long lv[N], lout[N];
  unsigned long long ulv[N], ulout[N];
  _Bool bov[N], boout[N];

  test_init(argc, argv);
  s = op_decl_set(N, "cells");
  s1 = op_decl_set(1, "one");
  s0 = op_decl_set(0, "none");
  for (i = 0; i < N; i++) {
    av[2 * i] = i;
    av[2 * i + 1] = 0.5 * i;
    uv[i] = 2000000000u + (unsigned)i;
    lv[i] = 3000000000LL * (i % 7) - 5;
    ulv[i] = 18000000000000000000ULL + (unsigned long long)i;
    bov[i] = (i % 3) == 0;
  }
  a = op_decl_dat(s, 2, "double", av, "a");
  b = op_decl_dat(s, 2, "int", NULL, "b");
  c = op_decl_dat(s, 3, "float", NULL, "c");
  u = op_decl_dat(s, 1, "uint", uv, "u");
  l = op_decl_dat(s, 1, "ll", lv, "l");
  ul = op_decl_dat(s, 1, "ull", ulv, "ul");
  bo = op_decl_dat(s, 1, "bool", bov, "bo");
  kfill = op_decl_kernel(src_write, "fill");
  kupd = op_decl_kernel(src_rw, "upd");
  kmany = op_decl_kernel(src_many, "many");

  /* READ a, WRITE b. */
  PAR_LOOP(kfill, "fill", s, op_arg_dat(a, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(b, -1, OP_ID, 2, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(b, bout);
  op_fetch_data(a, aout);
  for (i = 0; i < N; i++) {
    CHECK_INT(bout[2 * i], (int)(1.5 * i));
    CHECK_INT(bout[2 * i + 1], (int)(0.5 * i));
    CHECK_DBL(aout[2 * i], av[2 * i]); /* READ leaves it alone */
    CHECK_DBL(aout[2 * i + 1], av[2 * i + 1]);
  }

  /* RW twice: a0 -> 4 a0, a1 -> a1 + 2. */
  PAR_LOOP(kupd, "upd", s, op_arg_dat(a, -1, OP_ID, 2, "double", OP_RW));
  PAR_LOOP(kupd, "upd", s, op_arg_dat(a, -1, OP_ID, 2, "double", OP_RW));
  op_fetch_data(a, aout);
  for (i = 0; i < N; i++) {
    CHECK_DBL(aout[2 * i], 4.0 * i);
    CHECK_DBL(aout[2 * i + 1], 0.5 * i + 2.0);
  }

  /* Eight arguments of every type, plus an INC global counting the calls. */
  count = 0;
  PAR_LOOP(kmany, "many", s, op_arg_dat(a, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(b, -1, OP_ID, 2, "int", OP_READ), op_arg_dat(c, -1, OP_ID, 3, "float", OP_WRITE),
           op_arg_dat(u, -1, OP_ID, 1, "uint", OP_RW), op_arg_dat(l, -1, OP_ID, 1, "ll", OP_RW),
           op_arg_dat(ul, -1, OP_ID, 1, "ull", OP_RW), op_arg_dat(bo, -1, OP_ID, 1, "bool", OP_RW),
           op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_INT(count, N);
  op_fetch_data(c, cout);
  op_fetch_data(u, uout);
  op_fetch_data(l, lout);
  op_fetch_data(ul, ulout);
  op_fetch_data(bo, boout);
  for (i = 0; i < N; i++) {
    CHECK_DBL(cout[3 * i], (float)(4.0 * i));
    CHECK_DBL(cout[3 * i + 1], (float)(int)(0.5 * i));
    CHECK_DBL(cout[3 * i + 2], 0.5);
    CHECK_U64(uout[i], uv[i] * 2u + 1u); /* wraps modulo 2^32 */
    CHECK_INT(lout[i], lv[i] * 1000LL - 1);
    CHECK_U64(ulout[i], ulv[i] + 10000000000ULL); /* wraps modulo 2^64 */
    CHECK_INT(boout[i], !bov[i]);
  }

  /* A set of size 1. */
  {
    double one[2] = {3.0, -1.0}, out[2];
    a1 = op_decl_dat(s1, 2, "double", one, "a1");
    count = 0;
    PAR_LOOP(kupd, "upd", s1, op_arg_dat(a1, -1, OP_ID, 2, "double", OP_RW));
    op_fetch_data(a1, out);
    CHECK_DBL(out[0], 6.0);
    CHECK_DBL(out[1], 0.0);
  }

  /* A set of size 0: the kernel never runs, an INC global keeps the caller's value. */
  {
    int b0[2] = {0, 0};
    a0 = op_decl_dat(s0, 2, "double", NULL, "a0");
    count = 17;
    PAR_LOOP(kupd, "upd", s0, op_arg_dat(a0, -1, OP_ID, 2, "double", OP_RW));
    CHECK_OK();
    PAR_LOOP(kmany, "many0", s0, op_arg_dat(a0, -1, OP_ID, 2, "double", OP_READ),
             op_arg_dat(op_decl_dat(s0, 2, "int", b0, "b0"), -1, OP_ID, 2, "int", OP_READ),
             op_arg_dat(op_decl_dat(s0, 3, "float", NULL, "c0"), -1, OP_ID, 3, "float", OP_WRITE),
             op_arg_dat(op_decl_dat(s0, 1, "uint", NULL, "u0"), -1, OP_ID, 1, "uint", OP_RW),
             op_arg_dat(op_decl_dat(s0, 1, "ll", NULL, "l0"), -1, OP_ID, 1, "ll", OP_RW),
             op_arg_dat(op_decl_dat(s0, 1, "ull", NULL, "ul0"), -1, OP_ID, 1, "ull", OP_RW),
             op_arg_dat(op_decl_dat(s0, 1, "bool", NULL, "bo0"), -1, OP_ID, 1, "bool", OP_RW),
             op_arg_gbl(&count, 1, "int", OP_INC));
    CHECK_OK();
    CHECK_INT(count, 17);
  }

  /* The same kernel run again after other loops still gives the right answer (cached code). */
  PAR_LOOP(kfill, "fill", s, op_arg_dat(a, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(b, -1, OP_ID, 2, "int", OP_WRITE));
  op_fetch_data(b, bout);
  for (i = 0; i < N; i++) {
    CHECK_INT(bout[2 * i], (int)(4.0 * i + 0.5 * i + 2.0));
    CHECK_INT(bout[2 * i + 1], (int)(4.0 * i - 0.5 * i - 2.0));
  }

  op_exit();
  return 0;
}
