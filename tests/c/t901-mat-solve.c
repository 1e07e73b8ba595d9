/* op_solve: a P1 Laplacian plus mass on a jittered triangle mesh (symmetric positive definite)
 * and the same plus a skew convection term (non-symmetric), assembled in loops; b = A x* by
 * op_mat_mult, then the native CG / GMRES with Jacobi / none must give x* back; PETSc (in builds
 * with it) with CG/block Jacobi, CG/GAMG and GMRES/ILU the same; non-convergence (OP2_ERR_SOLVE, x keeps the last
 * iterate), PETSc's own errors (OP2_ERR_PETSC), malformed options (OP2_ERR_BAD_CONFIG). On
 * opencl (no matrix loops yet) the matrix is diagonal, set by op_mat_zero_rows. */
#include "test.h"

#define N 12
#define NN ((N + 1) * (N + 1))
#define NC (2 * N * N)

static int cell2node[3 * NC];
static double xy[2 * NN];

static const char *src_op =
    "void op(const double **x, double *A)\n"
    "{\n"
    "  double b[3] = {x[1][1] - x[2][1], x[2][1] - x[0][1], x[0][1] - x[1][1]};\n"
    "  double c[3] = {x[2][0] - x[1][0], x[0][0] - x[2][0], x[1][0] - x[0][0]};\n"
    "  double a2 = fabs(x[0][0] * b[0] + x[1][0] * b[1] + x[2][0] * b[2]);\n"
    "  for (int i = 0; i < 3; i++)\n"
    "    for (int j = 0; j < 3; j++)\n"
    "      A[3 * i + j] = (b[i] * b[j] + c[i] * c[j]) / (2.0 * a2) + a2 / 24.0 * (i == j ? 2.0 : 1.0)\n"
    "                     + skew * (b[j] + 0.5 * c[j]) / 6.0;\n"
    "}\n";

static void mesh(void)
{
  int i, j, c = 0;
  for (j = 0; j <= N; j++)
    for (i = 0; i <= N; i++) {
      int n = j * (N + 1) + i, in = i > 0 && i < N && j > 0 && j < N;
      xy[2 * n] = (double)i / N + (in ? 0.1 * sin(3.0 * n) / N : 0.0);
      xy[2 * n + 1] = (double)j / N + (in ? 0.1 * cos(2.0 * n) / N : 0.0);
    }
  for (j = 0; j < N; j++)
    for (i = 0; i < N; i++) {
      int n0 = j * (N + 1) + i, n1 = n0 + 1, n2 = n0 + N + 1, n3 = n2 + 1;
      cell2node[3 * c] = n0, cell2node[3 * c + 1] = n1, cell2node[3 * c + 2] = n3, c++;
      cell2node[3 * c] = n0, cell2node[3 * c + 1] = n3, cell2node[3 * c + 2] = n2, c++;
    }
}

static double maxdiff(op_dat d, const double *want)
{
  static double got[NN];
  double m = 0;
  int i;
  op_fetch_data(d, got);
  for (i = 0; i < NN; i++) m = fmax(m, fabs(got[i] - want[i]));
  return m;
}

int main(int argc, char **argv)
{
  const char *backend = test_init(argc, argv);
  int opencl = strcmp(backend, "opencl") == 0, i, its, petsc;
  static double xs[NN], zero[NN], got[NN];
  double skew = 0.0;
  op_set nodes, cells;
  op_map pcell;
  op_dat dxy, dx, db, dxs;
  op_sparsity sp;
  op_mat A, G;
  op_kernel k;

  mesh();
  for (i = 0; i < NN; i++) xs[i] = sin(0.3 * i) + 0.5;
  nodes = op_decl_set(NN, "nodes");
  cells = op_decl_set(NC, "cells");
  pcell = op_decl_map(cells, nodes, 3, cell2node, "pcell");
  dxy = op_decl_dat(nodes, 2, "double", xy, "xy");
  dxs = op_decl_dat(nodes, 1, "double", xs, "xs");
  dx = op_decl_dat(nodes, 1, "double", NULL, "x");
  db = op_decl_dat(nodes, 1, "double", NULL, "b");
  op_decl_const(1, "double", &skew, "skew");
  sp = op_decl_sparsity(pcell, pcell, "sp");
  A = op_decl_mat(sp, 1, 1, "double", "A");
  G = op_decl_mat(sp, 1, 1, "double", "G");
  k = op_decl_kernel(src_op, "op");
  if (opencl) {
    int rows[NN];
    for (i = 0; i < NN; i++) rows[i] = i;
    op_mat_zero_rows(A, NN, rows, 4.0);
    op_mat_zero_rows(G, NN, rows, 2.0);
  } else {
    PAR_LOOP(k, "spd", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
             op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC));
    skew = 3.0;
    op_decl_const(1, "double", &skew, "skew");
    PAR_LOOP(k, "nonsym", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
             op_arg_mat(G, -3, pcell, -3, pcell, "double", OP_INC));
  }

  /* SPD: CG (default options), CG without preconditioner, GMRES. */
  op_mat_mult(A, dxs, db);
  its = op_solve(A, db, dx, NULL); /* rtol 1e-5 */
  CHECK(its > 0 || opencl);
  CHECK(maxdiff(dx, xs) < 1e-3);
  its = op_solve(A, db, dx, "-ksp_rtol 1e-12");
  CHECK(maxdiff(dx, xs) < 1e-9);
  if (!opencl) CHECK(its > 5 && its < 200);
  its = op_solve(A, db, dx, "-ksp_type cg -pc_type none -ksp_rtol 1e-12");
  CHECK(maxdiff(dx, xs) < 1e-9);
  its = op_solve(A, db, dx, "-ksp_type gmres -pc_type jacobi -ksp_rtol 1e-12 -ksp_gmres_restart 20");
  CHECK(maxdiff(dx, xs) < 1e-9);
  CHECK_OK();

  /* Non-symmetric: GMRES converges (restarted, with and without Jacobi). */
  op_mat_mult(G, dxs, db);
  op_solve(G, db, dx, "-ksp_type gmres -ksp_rtol 1e-12");
  CHECK(maxdiff(dx, xs) < 1e-9);
  op_solve(G, db, dx, "-ksp_type gmres -pc_type none -ksp_rtol 1e-12 -ksp_gmres_restart 7");
  CHECK(maxdiff(dx, xs) < 1e-9);
  CHECK_OK();

  op_set_error_handler(OP_ERRORS_RETURN);
  if (!opencl) {
    /* Not converged in 3 iterations: x holds the 3rd iterate, not zero and not x*. */
    op_mat_mult(A, dxs, db);
    its = op_solve(A, db, dx, "-ksp_max_it 3 -ksp_rtol 1e-12");
    CHECK_INT(its, -1);
    CHECK_ERR(OP2_ERR_SOLVE, "op_solve", "mat 'A'", "cg with jacobi", "3 iterations", "residual");
    CHECK(maxdiff(dx, zero) > 0.1);
    CHECK(maxdiff(dx, xs) > 1e-6);
  }
  /* Malformed options. */
  op_solve(A, db, dx, "-ksp_rtol abc");
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_solve", "-ksp_rtol", "abc");
  op_solve(A, db, dx, "ksp_type cg");
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_solve", "'ksp_type'");
  op_solve(A, db, dx, "-ksp_max_it");
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_solve", "-ksp_max_it needs a value");

  /* PETSc: block Jacobi and GAMG, or OP2_ERR_BACKEND_UNAVAILABLE in builds without it. (GAMG
   * gives up on opencl's diagonal matrix: a graph without edges.) */
  op_mat_mult(A, dxs, db);
  op_solve(A, db, dx, "-ksp_type cg -pc_type bjacobi -ksp_rtol 1e-12");
  petsc = op_last_error_code() == 0;
  if (petsc) {
    CHECK(maxdiff(dx, xs) < 1e-8);
    if (!opencl) {
      op_solve(A, db, dx, "-ksp_type cg -pc_type gamg -ksp_rtol 1e-12");
      CHECK_OK();
      CHECK(maxdiff(dx, xs) < 1e-8);
    }
    op_mat_mult(G, dxs, db);
    op_solve(G, db, dx, "-ksp_type gmres -pc_type ilu -ksp_rtol 1e-12");
    CHECK_OK();
    CHECK(maxdiff(dx, xs) < 1e-8);
    /* The same options as the native solver, forced through PETSc: same answer. */
    op_mat_mult(A, dxs, db);
    op_solve(A, db, dx, "-op2_petsc -ksp_rtol 1e-12");
    CHECK_OK();
    CHECK(maxdiff(dx, xs) < 1e-9);
    op_solve(A, db, dx, "-ksp_type nosuchsolver");
    CHECK_ERR(OP2_ERR_PETSC, "op_solve", "mat 'A'", "PETSc error", "nosuchsolver");
    if (!opencl) {
      op_solve(A, db, dx, "-op2_petsc -ksp_max_it 2 -ksp_rtol 1e-12");
      CHECK_ERR(OP2_ERR_SOLVE, "op_solve", "PETSc cg with jacobi", "2 iterations", "DIVERGED_ITS");
    }
  } else {
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_solve", "-pc_type bjacobi needs PETSc");
  }

  /* Dats that do not fit. */
  {
    op_dat d2 = op_decl_dat(nodes, 2, "double", NULL, "d2");
    op_dat c1 = op_decl_dat(cells, 1, "double", NULL, "c1");
    op_dat f1 = op_decl_dat(nodes, 1, "float", NULL, "f1");
    op_solve(A, d2, dx, NULL);
    CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_solve", "b dat 'd2'", "double x 2");
    op_solve(A, db, c1, NULL);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_solve", "x dat 'c1'", "set 'cells'");
    op_solve(A, db, f1, NULL);
    CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_solve", "x dat 'f1'", "float");
    op_solve(A, db, db, NULL);
    CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_solve", "same dat");
    op_solve(NULL, db, dx, NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_solve", "A is NULL");
  }
  (void)got;
  op_exit();
  return 0;
}
