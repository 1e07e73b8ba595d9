/* Arguments of more than 4096 values per element (issue 10, beyond private staging): on opencl
 * they are staged in global memory (the kernel's parameters for them are declared __global in
 * the generated program), on the host backends they always worked. Hand-computed results on
 * every backend for: direct READ and RW dats of dim 5000, a vector argument of 300 x 20 values,
 * an indirect OP_INC of dim 5000 (coloured or blocked on devices), a READ global of 100000
 * values. The cuda backend still
 * refuses them (named error); a global reduction of more than 4096 values is refused on both
 * device backends. */
#include "test.h"

enum { D = 5000, NE = 64, NN = 13, W = 300, VD = 20, G = 100000 }; /* x, y: 2.5 MB (huge-page memory on CPU devices) */

int main(int argc, char **argv)
{
  static double x[NE * D], y[NE * D], nodes[NN * D], big[G], vec[NN * VD], sums[NE], red[D];
  static int e2n[2 * NE], wide[NE * W];
  int i, k, j;
  test_init(argc, argv);
  if (strcmp(argv[1], "cuda") == 0) {
    op_set s = op_decl_set(NE, "s");
    op_dat dx = op_decl_dat(s, D, "double", x, "x");
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(op_decl_kernel("void z(double *a) { a[0] = 0; }\n", "z"), "z", s,
             op_arg_dat(dx, -1, OP_ID, D, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop 'z'", "5000 values", "private memory");
    op_exit();
    return 0;
  }
  for (i = 0; i < NE * D; i++) x[i] = (double)(i % 97), y[i] = 1.0;
  for (i = 0; i < G; i++) big[i] = (double)(i % 1000) * 0.5;
  for (i = 0; i < NN * VD; i++) vec[i] = (double)(i % 11);
  for (i = 0; i < NE; i++) e2n[2 * i] = i % NN, e2n[2 * i + 1] = (i * 5 + 1) % NN;
  for (i = 0; i < NE * W; i++) wide[i] = (i * 7 + 3) % NN;

  op_set edges = op_decl_set(NE, "edges"), nds = op_decl_set(NN, "nodes");
  op_map pe = op_decl_map(edges, nds, 2, e2n, "pe");
  op_map pw = op_decl_map(edges, nds, W, wide, "pw");
  op_dat dx = op_decl_dat(edges, D, "double", x, "x");
  op_dat dy = op_decl_dat(edges, D, "double", y, "y");
  op_dat dn = op_decl_dat(nds, D, "double", NULL, "n");
  op_dat dv = op_decl_dat(nds, VD, "double", vec, "v");
  op_dat ds = op_decl_dat(edges, 1, "double", NULL, "s");

  /* y[k] = 2 y[k] + x[k] + big[k * 19]; s = sum of the new y row */
  op_kernel k1 = op_decl_kernel("void rw(const double *x, double *y, const double *b, double *s)\n"
                                "{\n  s[0] = 0;\n  for (int k = 0; k < 5000; k++) {\n"
                                "    y[k] = 2 * y[k] + x[k] + b[k * 19];\n    s[0] += y[k];\n  }\n}\n",
                                "rw");
  PAR_LOOP(k1, "rw", edges, op_arg_dat(dx, -1, OP_ID, D, "double", OP_READ),
           op_arg_dat(dy, -1, OP_ID, D, "double", OP_RW), op_arg_gbl(big, G, "double", OP_READ),
           op_arg_dat(ds, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(dy, y);
  op_fetch_data(ds, sums);
  for (i = 0; i < NE; i++) {
    double s = 0;
    for (k = 0; k < D; k++) {
      double want = 2.0 + (double)((i * D + k) % 97) + (double)((k * 19) % 1000) * 0.5;
      if (y[i * D + k] != want) CHECK_DBL(y[i * D + k], want);
      s += want;
    }
    CHECK_DBL(sums[i], s);
  }

  /* every edge adds (k + e) to component k of both its nodes */
  op_kernel k2 = op_decl_kernel("void inc2(const int *e, double *a, double *b)\n"
                                "{ for (int k = 0; k < 5000; k++) { a[k] += k + *e; b[k] += k + *e; } }\n",
                                "inc2");
  PAR_LOOP(k2, "inc2", edges, op_arg_idx(-1, OP_ID), op_arg_dat(dn, 0, pe, D, "double", OP_INC),
           op_arg_dat(dn, 1, pe, D, "double", OP_INC));
  CHECK_OK();
  op_fetch_data(dn, nodes);
  for (j = 0; j < NN; j++) {
    int cnt = 0, esum = 0;
    for (i = 0; i < NE; i++)
      for (k = 0; k < 2; k++)
        if (e2n[2 * i + k] == j) cnt++, esum += i;
    for (k = 0; k < D; k++) {
      double want = (double)cnt * k + esum;
      if (nodes[j * D + k] != want) CHECK_DBL(nodes[j * D + k], want);
    }
  }

  /* a vector argument of 300 x 20 values: s = sum over the map's nodes of their component (j % 20) */
  op_kernel k3 = op_decl_kernel("void vsum(const double **v, double *s)\n"
                                "{ s[0] = 0; for (int j = 0; j < 300; j++) s[0] += v[j][j % 20]; }\n",
                                "vsum");
  PAR_LOOP(k3, "vsum", edges, op_arg_dat(dv, -W, pw, VD, "double", OP_READ),
           op_arg_dat(ds, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(ds, sums);
  for (i = 0; i < NE; i++) {
    double want = 0;
    for (j = 0; j < W; j++) want += vec[wide[i * W + j] * VD + j % VD];
    CHECK_DBL(sums[i], want);
  }

  /* a reduction of 5000 values: fine on the host, refused on devices */
  for (k = 0; k < D; k++) red[k] = 1.0;
  if (strcmp(argv[1], "opencl") == 0) op_set_error_handler(OP_ERRORS_RETURN);
  PAR_LOOP(op_decl_kernel("void r(double *a) { a[4999] += 1.0; }\n", "r"), "r", edges,
           op_arg_gbl(red, D, "double", OP_INC));
  if (strcmp(argv[1], "opencl") == 0) {
    CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop 'r'", "5000 values", "private memory");
    CHECK_DBL(red[D - 1], 1.0);
  } else {
    CHECK_OK();
    CHECK_DBL(red[D - 1], 1.0 + NE);
  }
  op_exit();
  return 0;
}
