/* OP2 apps' kernel headers compile unchanged: the kernels in tests/c/op2-style/ (written as
 * OP2-Common's jac1, jac2, reduction and aero keep theirs) are read with op_decl_kernel_file,
 * run on the backend under test, and compared with the same files compiled natively into this
 * test. jac_update and jacf_update take u as OP_INC, as OP2-Common's jac1 and jac2 do (they
 * read it after incrementing it: direct OP_INC is staged with its value on devices). */
#include "test.h"

/* Natively, the kernels need what op2's kernel environment gives them. */
static double alpha = 0.1;
static float alphaf = 0.1f;
static double Ng2_xi[32], wtg2[4], gm1 = 0.4, m2 = 0.25, gm1i = 2.5;
#define OP2_STRIDE(arr, idx) (arr)[idx]
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
/* An OP2 header's `inline void f(...)` is an inline definition only (C99); natively each is
 * made a static function instead (op2 compiles them with GNU89 inline semantics). */
#define inline static inline
#include "op2-style/jac_res.h"
#include "op2-style/jac_update.h"
#include "op2-style/jacf_res.h"
#include "op2-style/jacf_update.h"
#include "op2-style/red_res_calc.h"
#include "op2-style/aero_res_calc.h"
#include "op2-style/aero_update.h"
#undef inline

#define DIR "tests/c/op2-style/"
#define NN 6
#define NE (3 * NN)

static op_kernel kernel(const char *file, const char *name)
{
  op_kernel k = op_decl_kernel_file(file, name);
  CHECK_OK();
  CHECK(k != NULL);
  return k;
}

/* A ring of NN nodes; each node has three edges: to itself, to the next, to the previous. */
static void ring(int *emap, double *A)
{
  for (int i = 0; i < NN; i++) {
    int e = 3 * i;
    emap[2 * e] = i, emap[2 * e + 1] = i, A[e] = 0.5;
    emap[2 * e + 2] = i, emap[2 * e + 3] = (i + 1) % NN, A[e + 1] = -0.25;
    emap[2 * e + 4] = i, emap[2 * e + 5] = (i + NN - 1) % NN, A[e + 2] = -0.125 * (i + 1);
  }
}

static void jac_double(void)
{
  int emap[2 * NE];
  double A[NE], r[NN], u[NN] = {0}, du[NN] = {0}, beta = 1.0;
  ring(emap, A);
  for (int i = 0; i < NN; i++) r[i] = i + 1;
  op_set nodes = op_decl_set(NN, "jac_nodes"), edges = op_decl_set(NE, "jac_edges");
  op_map pedge = op_decl_map(edges, nodes, 2, emap, "jac_pedge");
  op_dat pA = op_decl_dat(edges, 1, "double", A, "jac_A");
  op_dat pr = op_decl_dat(nodes, 1, "double", r, "jac_r");
  op_dat pu = op_decl_dat(nodes, 1, "double", u, "jac_u");
  op_dat pdu = op_decl_dat(nodes, 1, "double", du, "jac_du");
  op_decl_const(1, "double", &alpha, "alpha");
  op_kernel kres = kernel(DIR "jac_res.h", "jac_res"), kupd = kernel(DIR "jac_update.h", "jac_update");
  for (int it = 0; it < 4; it++) {
    double u_sum = 0.0, u_max = 0.0, ref_sum = 0.0, ref_max = 0.0;
    PAR_LOOP(kres, "jac_res", edges, op_arg_dat(pA, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(pu, 1, pedge, 1, "double", OP_READ), op_arg_dat(pdu, 0, pedge, 1, "double", OP_INC),
             op_arg_gbl(&beta, 1, "double", OP_READ));
    PAR_LOOP(kupd, "jac_update", nodes, op_arg_dat(pr, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(pdu, -1, OP_ID, 1, "double", OP_RW), op_arg_dat(pu, -1, OP_ID, 1, "double", OP_INC),
             op_arg_gbl(&u_sum, 1, "double", OP_INC), op_arg_gbl(&u_max, 1, "double", OP_MAX));
    for (int e = 0; e < NE; e++) jac_res(&A[e], &u[emap[2 * e + 1]], &du[emap[2 * e]], &beta);
    for (int i = 0; i < NN; i++) jac_update(&r[i], &du[i], &u[i], &ref_sum, &ref_max);
    CHECK_NEAR(u_sum, ref_sum, 1e-12 * ref_sum);
    CHECK_DBL(u_max, ref_max);
  }
  double got[NN];
  op_fetch_data(pu, got);
  for (int i = 0; i < NN; i++) CHECK_NEAR(got[i], u[i], 1e-12 * fabs(u[i]));
  CHECK(u[NN - 1] > 1.0); /* the iteration did something */
}

static void jac_float(void)
{
  int emap[2 * NE];
  double A[NE];
  float r[NN], u[NN] = {0}, du[NN] = {0}, beta = 1.0f;
  ring(emap, A);
  for (int i = 0; i < NN; i++) r[i] = (float)(i + 1);
  op_set nodes = op_decl_set(NN, "jacf_nodes"), edges = op_decl_set(NE, "jacf_edges");
  op_map pedge = op_decl_map(edges, nodes, 2, emap, "jacf_pedge");
  op_dat pA = op_decl_dat(edges, 1, "double", A, "jacf_A");
  op_dat pr = op_decl_dat(nodes, 1, "float", r, "jacf_r");
  op_dat pu = op_decl_dat(nodes, 1, "float", u, "jacf_u");
  op_dat pdu = op_decl_dat(nodes, 1, "float", du, "jacf_du");
  op_decl_const(1, "float", &alphaf, "alphaf");
  op_kernel kres = kernel(DIR "jacf_res.h", "jacf_res"), kupd = kernel(DIR "jacf_update.h", "jacf_update");
  for (int it = 0; it < 4; it++) {
    float u_sum = 0.0f, u_max = 0.0f, ref_sum = 0.0f, ref_max = 0.0f;
    PAR_LOOP(kres, "jacf_res", edges, op_arg_dat(pA, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(pu, 1, pedge, 1, "float", OP_READ), op_arg_dat(pdu, 0, pedge, 1, "float", OP_INC),
             op_arg_gbl(&beta, 1, "float", OP_READ));
    PAR_LOOP(kupd, "jacf_update", nodes, op_arg_dat(pr, -1, OP_ID, 1, "float", OP_READ),
             op_arg_dat(pdu, -1, OP_ID, 1, "float", OP_RW), op_arg_dat(pu, -1, OP_ID, 1, "float", OP_INC),
             op_arg_gbl(&u_sum, 1, "float", OP_INC), op_arg_gbl(&u_max, 1, "float", OP_MAX));
    for (int e = 0; e < NE; e++) jacf_res(&A[e], &u[emap[2 * e + 1]], &du[emap[2 * e]], &beta);
    for (int i = 0; i < NN; i++) jacf_update(&r[i], &du[i], &u[i], &ref_sum, &ref_max);
    CHECK_NEAR(u_sum, ref_sum, 1e-5 * ref_sum);
    CHECK_NEAR(u_max, ref_max, 1e-5 * ref_max);
  }
  float got[NN];
  op_fetch_data(pu, got);
  for (int i = 0; i < NN; i++) CHECK_NEAR(got[i], u[i], 1e-5 * fabs(u[i]));
}

static void reduction(void)
{
  double data[NE];
  for (int e = 0; e < NE; e++) data[e] = e + 1.0;
  op_set edges = op_decl_set(NE, "red_edges");
  op_dat pdata = op_decl_dat(edges, 1, "double", data, "red_data");
  op_kernel k = kernel(DIR "red_res_calc.h", "red_res_calc");
  int count = 5; /* OP_INC adds to the caller's value */
  PAR_LOOP(k, "red_res_calc", edges, op_arg_dat(pdata, -1, OP_ID, 1, "double", OP_RW),
           op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_INT(count, 5 + NE);
  double got[NE];
  op_fetch_data(pdata, got);
  for (int e = 0; e < NE; e++) CHECK_DBL(got[e], 0.0);
}

/* 2x2 quads on the unit square, slightly distorted; 9 nodes. */
static void aero(void)
{
  enum { NX = 3, NNODE = NX * NX, NCELL = 4 };
  double x[2 * NNODE], phim[NNODE], res[NNODE] = {0}, K[16 * NCELL], u[NNODE];
  int cmap[4 * NCELL];
  for (int j = 0; j < NX; j++)
    for (int i = 0; i < NX; i++) {
      int n = j * NX + i;
      x[2 * n] = 0.5 * i + 0.03 * j * i;
      x[2 * n + 1] = 0.5 * j - 0.02 * i;
      phim[n] = 0.1 * x[2 * n] + 0.05 * x[2 * n + 1] * x[2 * n + 1];
      u[n] = 0.01 * n;
    }
  for (int c = 0; c < NCELL; c++) {
    int i = c % 2, j = c / 2, n = j * NX + i;
    cmap[4 * c] = n, cmap[4 * c + 1] = n + 1, cmap[4 * c + 2] = n + NX + 1, cmap[4 * c + 3] = n + NX;
  }
  /* Bilinear shape-function derivatives at the 2x2 Gauss points. */
  const double gp = 1.0 / sqrt(3.0), xs[4] = {-1, 1, 1, -1}, es[4] = {-1, -1, 1, 1};
  for (int g = 0; g < 4; g++) {
    double xi = xs[g] * gp, eta = es[g] * gp;
    wtg2[g] = 0.25;
    for (int m = 0; m < 4; m++) {
      Ng2_xi[4 * g + m] = 0.25 * xs[m] * (1 + es[m] * eta);
      Ng2_xi[4 * g + 16 + m] = 0.25 * es[m] * (1 + xs[m] * xi);
    }
  }
  op_set nodes = op_decl_set(NNODE, "aero_nodes"), cells = op_decl_set(NCELL, "aero_cells");
  op_map pcell = op_decl_map(cells, nodes, 4, cmap, "aero_pcell");
  op_dat px = op_decl_dat(nodes, 2, "double", x, "aero_x");
  op_dat pphim = op_decl_dat(nodes, 1, "double", phim, "aero_phim");
  op_dat pres = op_decl_dat(nodes, 1, "double", res, "aero_res");
  op_dat pu = op_decl_dat(nodes, 1, "double", u, "aero_u");
  op_dat pK = op_decl_dat(cells, 16, "double", NULL, "aero_K");
  op_decl_const(32, "double", Ng2_xi, "Ng2_xi");
  op_decl_const(4, "double", wtg2, "wtg2");
  op_decl_const(1, "double", &gm1, "gm1");
  op_decl_const(1, "double", &m2, "m2");
  op_decl_const(1, "double", &gm1i, "gm1i");
  op_kernel kres = kernel(DIR "aero_res_calc.h", "aero_res_calc");
  op_kernel kupd = kernel(DIR "aero_update.h", "aero_update");
  PAR_LOOP(kres, "aero_res_calc", cells, op_arg_dat(px, -4, pcell, 2, "double", OP_READ),
           op_arg_dat(pphim, -4, pcell, 1, "double", OP_READ), op_arg_dat(pK, -1, OP_ID, 16, "double", OP_WRITE),
           op_arg_dat(pres, -4, pcell, 1, "double", OP_INC));
  double got_res[NNODE], got_K[16 * NCELL];
  op_fetch_data(pres, got_res);
  op_fetch_data(pK, got_K);
  for (int c = 0; c < NCELL; c++) {
    double *xv[4], *pv[4], *rv[4];
    for (int m = 0; m < 4; m++) {
      xv[m] = &x[2 * cmap[4 * c + m]];
      pv[m] = &phim[cmap[4 * c + m]];
      rv[m] = &res[cmap[4 * c + m]];
    }
    aero_res_calc(xv, pv, &K[16 * c], rv);
  }
  for (int n = 0; n < NNODE; n++) CHECK_NEAR(got_res[n], res[n], 1e-12 * fabs(res[n]) + 1e-15);
  for (int i = 0; i < 16 * NCELL; i++) CHECK_NEAR(got_K[i], K[i], 1e-12 * fabs(K[i]));
  CHECK(K[0] > 0.0 && fabs(res[4]) > 1e-6); /* a real element matrix, and the centre node gets four cells */

  double rms = 0.0, ref_rms = 0.0;
  PAR_LOOP(kupd, "aero_update", nodes, op_arg_dat(pphim, -1, OP_ID, 1, "double", OP_RW),
           op_arg_dat(pres, -1, OP_ID, 1, "double", OP_WRITE), op_arg_dat(pu, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&rms, 1, "double", OP_INC));
  for (int n = 0; n < NNODE; n++) aero_update(&phim[n], &res[n], &u[n], &ref_rms);
  CHECK_NEAR(rms, ref_rms, 1e-14);
  double got_phim[NNODE];
  op_fetch_data(pphim, got_phim);
  for (int n = 0; n < NNODE; n++) CHECK_DBL(got_phim[n], phim[n]);
}

int main(int argc, char **argv)
{
  test_init(argc, argv);
  jac_double();
  jac_float();
  reduction();
  aero();
  op_exit();
  return 0;
}
