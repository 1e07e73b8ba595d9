/* Matrices under MPI beyond the square scalar case: a rectangular matrix (rows: cells through
 * an identity map cells -> cells, columns: nodes through cells -> nodes, 1 x 2 blocks) applied
 * by op_mat_mult from a node dat to a cell dat, and a 2 x 2 block square matrix solved natively
 * (CG + Jacobi) and through PETSc (GMRES + block Jacobi on the MPIAIJ matrix), against values
 * computed here in global numbering, with METIS and RCB partitions.
 * usage: t871-mpi-mat-rect BACKEND
 * mpi-backends: seq threads
 * mpi-n: 1 2 3 */
#include "test.h"
#include "grid.h"
#include <math.h>
#include <mpi.h>

static const char *k_grad =
    "void grad(const double **x, double *G) {\n"
    "  for (int j = 0; j < 4; j++)\n"
    "    for (int b = 0; b < 2; b++) G[2 * j + b] = (j + 1) * (x[j][b] + 0.5);\n"
    "}\n";
/* Per component the scalar SPD element matrix of t870, plus a small coupling of the two
 * components at the same node. */
static const char *k_blk =
    "void blk(const double *c, double *K) {\n"
    "  double w = 1.0 + 0.1 * c[0] + 0.01 * c[1];\n"
    "  for (int i = 0; i < 4; i++)\n"
    "    for (int a = 0; a < 2; a++)\n"
    "      for (int j = 0; j < 4; j++)\n"
    "        for (int b = 0; b < 2; b++)\n"
    "          K[(2 * i + a) * 8 + 2 * j + b] = a == b ? (i == j ? 3.0 : -1.0) * 0.25 + w * (i == j ? 4.0 : 1.0) / 36.0\n"
    "                                                   : (i == j ? 0.01 : 0.0);\n"
    "}\n";

static double k_val(double cx, double cy, int i, int a, int j, int b)
{
  double w = 1.0 + 0.1 * cx + 0.01 * cy;
  if (a == b) return (i == j ? 3.0 : -1.0) * 0.25 + w * (i == j ? 4.0 : 1.0) / 36.0;
  return i == j ? 0.01 : 0.0;
}

static void run(const char *backend, const char *lib, const char *routine)
{
  grid g;
  int rank, p, i, j, a, b, c;
  char token[128];
  char *args[2];
  grid_make(&g, 9, 8);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  args[0] = (char *)"t871";
  args[1] = token;
  op_init(2, args, 0);
  int N = g.nnode, C = g.ncell;
  int c0 = block_lo(C, rank, p), nc = block_n(C, rank, p);
  int n0 = block_lo(N, rank, p), nn = block_n(N, rank, p);
  int *self = malloc(sizeof(int) * (size_t)C);
  for (c = 0; c < C; c++) self[c] = c;
  op_set cells = op_decl_set(nc, "cells");
  op_set nodes = op_decl_set(nn, "nodes");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  op_map cc = op_decl_map(cells, cells, 1, self + c0, "cc");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  double *v = malloc(sizeof(double) * 2 * (size_t)N);
  for (i = 0; i < 2 * N; i++) v[i] = 1.0 + cos(0.21 * i);
  op_dat dv = op_decl_dat(nodes, 2, "double", v + 2 * n0, "v");
  op_dat dw = op_decl_dat(cells, 1, "double", NULL, "w");
  op_dat dy = op_decl_dat(nodes, 2, "double", NULL, "y");
  op_dat du = op_decl_dat(nodes, 2, "double", NULL, "u");
  if (strcmp(lib, "RCB") == 0)
    op_partition(lib, routine, cells, OP_ID, cx);
  else
    op_partition(lib, routine, cells, pcell, NULL);
  op_sparsity rs = op_decl_sparsity(cc, pcell, "rect");
  op_sparsity ss = op_decl_sparsity(pcell, pcell, "square");
  op_mat G = op_decl_mat(rs, 1, 2, "double", "G");
  op_mat K = op_decl_mat(ss, 2, 2, "double", "K");
  CHECK_OK();
  PAR_LOOP(op_decl_kernel(k_grad, "grad"), "grad", cells, op_arg_dat(x, -4, pcell, 2, "double", OP_READ),
           op_arg_mat(G, 0, cc, -4, pcell, "double", OP_INC));
  PAR_LOOP(op_decl_kernel(k_blk, "blk"), "blk", cells, op_arg_dat(cx, -1, OP_ID, 2, "double", OP_READ),
           op_arg_mat(K, -4, pcell, -4, pcell, "double", OP_INC));
  CHECK_OK();
  CHECK_INT((int)op_mat_nnz(G), 8 * C);

  /* w = G v, per cell: sum over its nodes j and components b. */
  double *got = malloc(sizeof(double) * 2 * (size_t)(N + C + 1));
  op_mat_mult(G, dv, dw);
  CHECK_OK();
  op_fetch_data(dw, got);
  for (i = 0; i < nc; i++) {
    double want = 0;
    c = c0 + i;
    for (j = 0; j < 4; j++)
      for (b = 0; b < 2; b++) {
        int n = g.cnode[4 * c + j];
        want += (j + 1) * (g.x[2 * n + b] + 0.5) * v[2 * n + b];
      }
    CHECK_NEAR(got[i], want, 1e-12 * fabs(want));
  }

  /* y = K v from the reference, then K u = y solved: u = v within the tolerance. */
  double *y = calloc(2 * (size_t)N, sizeof(double));
  for (c = 0; c < C; c++)
    for (i = 0; i < 4; i++)
      for (a = 0; a < 2; a++)
        for (j = 0; j < 4; j++)
          for (b = 0; b < 2; b++)
            y[2 * g.cnode[4 * c + i] + a] +=
                k_val(g.cx[2 * c], g.cx[2 * c + 1], i, a, j, b) * v[2 * g.cnode[4 * c + j] + b];
  op_mat_mult(K, dv, dy);
  op_fetch_data(dy, got);
  for (i = 0; i < 2 * nn; i++) CHECK_NEAR(got[i], y[2 * n0 + i], 1e-12 * fabs(y[2 * n0 + i]));
  const char *solvers[] = {"-ksp_type cg -pc_type jacobi -ksp_rtol 1e-12",
                           "-ksp_type gmres -pc_type bjacobi -ksp_rtol 1e-12"};
  op_set_error_handler(OP_ERRORS_RETURN);
  for (int k = 0; k < 2; k++) {
    int its = op_solve(K, dy, du, solvers[k]);
    if (k == 1 && its < 0 && op_last_error_code() == OP2_ERR_BACKEND_UNAVAILABLE) break; /* no PETSc */
    CHECK_OK();
    CHECK(its > 0 && its < 500);
    op_fetch_data(du, got);
    for (i = 0; i < 2 * nn; i++) CHECK_NEAR(got[i], v[2 * n0 + i], 1e-8);
  }
  /* A rectangular matrix is not solved. */
  op_solve(G, dw, dv, NULL);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_solve", "not square");
  op_set_error_handler(OP_ERRORS_ABORT);
  op_exit();
  free(self);
  free(v);
  free(got);
  free(y);
  grid_free(&g);
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  MPI_Init(&argc, &argv);
  run(argv[1], "METIS", "KWAY");
  run(argv[1], "RCB", NULL);
  MPI_Finalize();
  return 0;
}
