/* Global arguments: READ, INC, MIN, MAX combining with non-trivial values in the caller's
 * memory; int, double, ll, float, uint; dim > 1; op_arg_gbl_char; empty sets; indirect loops. */
#include "test.h"

#define N 100

static const char *src_red =
    "void red(const double *v, const int *iv, const double *scale, double *sum, int *isum,\n"
    "         double *mn, double *mx, int *imn, int *imx, double *big, double *small)\n"
    "{\n"
    "  *sum += *scale * *v;\n"
    "  *isum += *iv;\n"
    "  if (*v < *mn) *mn = *v;\n"
    "  if (*v > *mx) *mx = *v;\n"
    "  if (*iv < *imn) *imn = *iv;\n"
    "  if (*iv > *imx) *imx = *iv;\n"
    "  if (*v > *big) *big = *v;     /* caller's value is above every v: stays */\n"
    "  if (*v < *small) *small = *v; /* caller's value is below every v: stays */\n"
    "}\n";

static const char *src_vec =
    "void vec(const int *iv, const double *r, int *inc3, double *mx2, double *mn2, long long *l,\n"
    "         float *f, unsigned *u)\n"
    "{\n"
    "  inc3[0] += 1; inc3[1] += *iv; inc3[2] -= 2 * *iv;\n"
    "  if (*iv * r[0] > mx2[0]) mx2[0] = *iv * r[0];\n"
    "  if (-*iv * r[1] > mx2[1]) mx2[1] = -*iv * r[1];\n"
    "  if (*iv * r[0] < mn2[0]) mn2[0] = *iv * r[0];\n"
    "  if (*iv + r[1] < mn2[1]) mn2[1] = *iv + r[1];\n"
    "  *l += 100000000000LL;\n"
    "  *f += 0.5f;\n"
    "  *u += 3u;\n"
    "}\n";

static const char *src_edge =
    "void edge(const int *a, const int *b, int *sum, int *mx)\n"
    "{\n"
    "  *sum += *a * *b;\n"
    "  if (*a + *b > *mx) *mx = *a + *b;\n"
    "}\n";

int main(int argc, char **argv)
{
  double v[N], scale = 0.5, sum, mn, mx, big, small;
  int iv[N], isum, imn, imx, i;
  op_set s, s0;
  op_dat dv, div;
  op_kernel kred, kvec;

  test_init(argc, argv);
  /* v = 0.25 * ((i * 37) % 100) - 7: a permutation of -7 .. 17.75, min at i = 0, max at i = 27;
   * iv = (i * 53) % 100 - 40: -40 .. 59. */
  for (i = 0; i < N; i++) {
    v[i] = 0.25 * ((i * 37) % 100) - 7.0;
    iv[i] = (i * 53) % 100 - 40;
  }
  s = op_decl_set(N, "cells");
  s0 = op_decl_set(0, "none");
  dv = op_decl_dat(s, 1, "double", v, "v");
  div = op_decl_dat(s, 1, "int", iv, "iv");
  kred = op_decl_kernel(src_red, "red");
  kvec = op_decl_kernel(src_vec, "vec");

  sum = 10.5;
  isum = -3;
  mn = 1e300;
  mx = -1e300;
  imn = 1000;
  imx = -1000;
  big = 100.0;
  small = -100.0;
  PAR_LOOP(kred, "red", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(div, -1, OP_ID, 1, "int", OP_READ),
           op_arg_gbl(&scale, 1, "double", OP_READ), op_arg_gbl(&sum, 1, "double", OP_INC),
           op_arg_gbl(&isum, 1, "int", OP_INC), op_arg_gbl(&mn, 1, "double", OP_MIN),
           op_arg_gbl(&mx, 1, "double", OP_MAX), op_arg_gbl(&imn, 1, "int", OP_MIN),
           op_arg_gbl(&imx, 1, "int", OP_MAX), op_arg_gbl(&big, 1, "double", OP_MAX),
           op_arg_gbl(&small, 1, "double", OP_MIN));
  CHECK_OK();
  /* sum v = 0.25 * 4950 - 700 = 537.5; half of it is 268.75. sum iv = 4950 - 4000 = 950. */
  CHECK_DBL(sum, 10.5 + 268.75);
  CHECK_INT(isum, -3 + 950);
  CHECK_DBL(mn, -7.0);
  CHECK_DBL(mx, 17.75);
  CHECK_INT(imn, -40);
  CHECK_INT(imx, 59);
  CHECK_DBL(big, 100.0);
  CHECK_DBL(small, -100.0);
  CHECK_DBL(scale, 0.5); /* READ global untouched */

  /* Again: INC adds onto whatever the caller holds now; MIN/MAX combine with caller values that
   * beat some but not all of the elements. */
  sum = -1.0;
  isum = 50;
  mn = 0.0;   /* some v are below */
  mx = 100.0; /* above all: stays */
  imn = -100; /* below all: stays */
  imx = 0;    /* some iv are above */
  scale = 2.0;
  PAR_LOOP(kred, "red", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(div, -1, OP_ID, 1, "int", OP_READ),
           op_arg_gbl(&scale, 1, "double", OP_READ), op_arg_gbl(&sum, 1, "double", OP_INC),
           op_arg_gbl(&isum, 1, "int", OP_INC), op_arg_gbl(&mn, 1, "double", OP_MIN),
           op_arg_gbl(&mx, 1, "double", OP_MAX), op_arg_gbl(&imn, 1, "int", OP_MIN),
           op_arg_gbl(&imx, 1, "int", OP_MAX), op_arg_gbl(&big, 1, "double", OP_MAX),
           op_arg_gbl(&small, 1, "double", OP_MIN));
  CHECK_DBL(sum, -1.0 + 1075.0);
  CHECK_INT(isum, 50 + 950);
  CHECK_DBL(mn, -7.0);
  CHECK_DBL(mx, 100.0);
  CHECK_INT(imn, -100);
  CHECK_INT(imx, 59);

  /* Over an empty set every reduction keeps the caller's value. */
  {
    op_dat ev = op_decl_dat(s0, 1, "double", NULL, "ev"), ei = op_decl_dat(s0, 1, "int", NULL, "ei");
    sum = 10.5;
    isum = 7;
    mn = 3.0;
    mx = -3.0;
    imn = 5;
    imx = -5;
    PAR_LOOP(kred, "red0", s0, op_arg_dat(ev, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(ei, -1, OP_ID, 1, "int", OP_READ),
             op_arg_gbl(&scale, 1, "double", OP_READ), op_arg_gbl(&sum, 1, "double", OP_INC),
             op_arg_gbl(&isum, 1, "int", OP_INC), op_arg_gbl(&mn, 1, "double", OP_MIN),
             op_arg_gbl(&mx, 1, "double", OP_MAX), op_arg_gbl(&imn, 1, "int", OP_MIN),
             op_arg_gbl(&imx, 1, "int", OP_MAX), op_arg_gbl(&big, 1, "double", OP_MAX),
             op_arg_gbl(&small, 1, "double", OP_MIN));
    CHECK_OK();
    CHECK_DBL(sum, 10.5);
    CHECK_INT(isum, 7);
    CHECK_DBL(mn, 3.0);
    CHECK_DBL(mx, -3.0);
    CHECK_INT(imn, 5);
    CHECK_INT(imx, -5);
  }

  /* dim > 1 globals and other types; r is a dim-2 READ global. */
  {
    int inc3[3] = {1, 2, 3};
    double r[2] = {0.5, 2.0}, mx2[2] = {-1e9, 1e9}, mn2[2] = {1e9, -1e9};
    long long l = -5;
    float f = 1.25f;
    unsigned u = 4294967000u;
    PAR_LOOP(kvec, "vec", s, op_arg_dat(div, -1, OP_ID, 1, "int", OP_READ),
             op_arg_gbl(r, 2, "double", OP_READ), op_arg_gbl(inc3, 3, "int", OP_INC),
             op_arg_gbl(mx2, 2, "double", OP_MAX), op_arg_gbl(mn2, 2, "double", OP_MIN),
             op_arg_gbl(&l, 1, "ll", OP_INC), op_arg_gbl(&f, 1, "float", OP_INC),
             op_arg_gbl(&u, 1, "uint", OP_INC));
    CHECK_OK();
    CHECK_INT(inc3[0], 1 + N);
    CHECK_INT(inc3[1], 2 + 950);
    CHECK_INT(inc3[2], 3 - 1900);
    CHECK_DBL(mx2[0], 29.5); /* 59 * 0.5 */
    CHECK_DBL(mx2[1], 1e9);  /* max of -2 iv is 80, below the caller's 1e9 */
    CHECK_DBL(mn2[0], -20.0);
    CHECK_DBL(mn2[1], -1e9);
    CHECK_DBL(r[0], 0.5);
    CHECK_DBL(r[1], 2.0);
    CHECK_INT(l, -5 + 100 * 100000000000LL);
    CHECK_DBL(f, 51.25f);
    CHECK_U64(u, 4294967000u + 3u * N); /* wraps modulo 2^32 */
  }

  /* A loop whose only arguments are globals and the element index; MIN / MAX of ll, uint and
   * float. */
  {
    int n = 1000;
    long long lmin = 5, lsum = 0;
    unsigned umax = 7u;
    float fmax = -1.0f, fmin = 0.75f;
    op_kernel ko = op_decl_kernel(
        "void only(const int *e, int *n, long long *lmin, long long *lsum, unsigned *umax,\n"
        "          float *fmax, float *fmin)\n"
        "{\n"
        "  long long v = -3000000000LL * (*e % 5);\n"
        "  *n += 1; *lsum += v;\n"
        "  if (v < *lmin) *lmin = v;\n"
        "  if (4000000000u - (unsigned)*e > *umax) *umax = 4000000000u - (unsigned)*e;\n"
        "  if (0.25f * *e > *fmax) *fmax = 0.25f * *e;\n"
        "  if (0.25f * *e < *fmin) *fmin = 0.25f * *e;\n"
        "}\n",
        "only");
    PAR_LOOP(ko, "only", s, op_arg_idx(-1, OP_ID), op_arg_gbl(&n, 1, "int", OP_INC),
             op_arg_gbl(&lmin, 1, "ll", OP_MIN), op_arg_gbl(&lsum, 1, "ll", OP_INC),
             op_arg_gbl(&umax, 1, "uint", OP_MAX), op_arg_gbl(&fmax, 1, "float", OP_MAX),
             op_arg_gbl(&fmin, 1, "float", OP_MIN));
    CHECK_OK();
    CHECK_INT(n, 1000 + N);
    CHECK_INT(lmin, -12000000000LL);
    CHECK_INT(lsum, -3000000000LL * (0 + 1 + 2 + 3 + 4) * (N / 5));
    CHECK_U64(umax, 4000000000u); /* above INT_MAX: compared as unsigned */
    CHECK_DBL(fmax, 0.25f * (N - 1));
    CHECK_DBL(fmin, 0.0f);
  }

  /* op_arg_gbl_char: the same with the element size given. */
  {
    double cs = 0.25, cm = -50.0;
    int ci = 1;
    op_kernel kc = op_decl_kernel(
        "void gc(const double *v, double *s, double *m, int *c)\n"
        "{ *s += *v; if (*v > *m) *m = *v; *c += 2; }\n",
        "gc");
    PAR_LOOP(kc, "gc", s, op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
             op_arg_gbl_char((char *)&cs, 1, "double", (int)sizeof(double), OP_INC),
             op_arg_gbl_char((char *)&cm, 1, "double", (int)sizeof(double), OP_MAX),
             op_arg_gbl_char((char *)&ci, 1, "int", (int)sizeof(int), OP_INC));
    CHECK_OK();
    CHECK_DBL(cs, 0.25 + 537.5);
    CHECK_DBL(cm, 17.75);
    CHECK_INT(ci, 1 + 2 * N);
  }

  /* Globals in an indirect loop (with an indirect INC in the same loop). */
  {
    int e2n[2 * N], nv[N], total = 1000, best = -1, i2;
    long long expect = 1000;
    int emax = -1;
    op_set nodes = op_decl_set(N, "nodes");
    op_map pe;
    op_dat dn;
    op_kernel ke = op_decl_kernel(src_edge, "edge");
    for (i2 = 0; i2 < N; i2++) {
      nv[i2] = (i2 * 7) % 13;
      e2n[2 * i2] = i2;
      e2n[2 * i2 + 1] = (i2 * 3 + 1) % N;
    }
    for (i2 = 0; i2 < N; i2++) {
      int a = nv[e2n[2 * i2]], b = nv[e2n[2 * i2 + 1]];
      expect += a * b;
      if (a + b > emax) emax = a + b;
    }
    pe = op_decl_map(s, nodes, 2, e2n, "pe");
    dn = op_decl_dat(nodes, 1, "int", nv, "nv");
    PAR_LOOP(ke, "edge", s, op_arg_dat(dn, 0, pe, 1, "int", OP_READ),
             op_arg_dat(dn, 1, pe, 1, "int", OP_READ), op_arg_gbl(&total, 1, "int", OP_INC),
             op_arg_gbl(&best, 1, "int", OP_MAX));
    CHECK_INT(total, expect);
    CHECK_INT(best, emax);
  }

  op_exit();
  return 0;
}
