/* op_solve reports success only when the true residual |b - Ax|/|b| meets the tolerance. On a
 * path of NN nodes: the graph Laplacian L (singular: constants are its null space) and L + 0.1 I
 * (symmetric positive definite). L x = e_0 has no solution (the best any x can do is
 * |b - Ax|/|b| = 1/sqrt(NN), the part of b along the constants): native GMRES (Jacobi and none)
 * and CG, and PETSc's GMRES (builds with PETSc), are OP2_ERR_SOLVE naming the solver, the
 * iterations and a true residual of at least 1/sqrt(NN). A consistent singular system (b = L x*)
 * and the positive definite one solve; b = 0 gives x = 0 after 0 iterations; an absurd
 * -ksp_gmres_restart (10^12) is bounded by the system's size instead of sizing memory. */
#include "test.h"

/* PETSc's first use initialises MPI, whose runtime leaks small blocks (see t901): LeakSanitizer
 * is paused around the PETSc calls and from the end of main on. */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define LEAKS_IGNORED(stmt) (__lsan_disable(), (stmt), __lsan_enable())
#define LEAKS_IGNORED_FROM_HERE() __lsan_disable()
#else
#define LEAKS_IGNORED(stmt) (stmt)
#define LEAKS_IGNORED_FROM_HERE() ((void)0)
#endif

#define NN 40 /* the restart-40 case below depends on it */
#define NE (NN - 1)

static const char *src_lap = "void lap(double *A) { A[0] = 1.0 + shift; A[1] = -1.0; A[2] = -1.0; A[3] = 1.0 + shift; }\n";

/* The number after "true residual |b - Ax|/|b| = " in the last error message (-1 if none). */
static double reported_residual(void)
{
  const char *key = "true residual |b - Ax|/|b| = ";
  const char *at = strstr(op_last_error_message(), key);
  return at ? strtod(at + strlen(key), NULL) : -1.0;
}

int main(int argc, char **argv)
{
  static int e2n[2 * NE];
  static double xs[NN], e0[NN], got[NN], ones[NN];
  double shift = 0.0, m;
  int i, its;
  for (i = 0; i < NE; i++) e2n[2 * i] = i, e2n[2 * i + 1] = i + 1;
  for (i = 0; i < NN; i++) xs[i] = cos(0.2 * i), e0[i] = i == 0, ones[i] = 1.0;

  test_init(argc, argv);
  op_set nodes = op_decl_set(NN, "nodes");
  op_set edges = op_decl_set(NE, "edges");
  op_map pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
  op_dat dxs = op_decl_dat(nodes, 1, "double", xs, "xs");
  op_dat de0 = op_decl_dat(nodes, 1, "double", e0, "e0");
  op_dat dx = op_decl_dat(nodes, 1, "double", ones, "x");
  op_dat db = op_decl_dat(nodes, 1, "double", NULL, "b");
  op_sparsity sp = op_decl_sparsity(pedge, pedge, "sp");
  op_mat L = op_decl_mat(sp, 1, 1, "double", "L");
  op_mat S = op_decl_mat(sp, 1, 1, "double", "S");
  op_decl_const(1, "double", &shift, "shift");
  op_kernel k = op_decl_kernel(src_lap, "lap");
  PAR_LOOP(k, "lap", edges, op_arg_mat(L, -2, pedge, -2, pedge, "double", OP_INC));
  shift = 0.05;
  op_decl_const(1, "double", &shift, "shift");
  PAR_LOOP(k, "lap_shift", edges, op_arg_mat(S, -2, pedge, -2, pedge, "double", OP_INC));

  /* positive definite: solves, also with a restart far beyond the system's size */
  op_mat_mult(S, dxs, db);
  its = op_solve(S, db, dx, "-ksp_rtol 1e-10");
  CHECK_OK();
  CHECK(its > 0);
  op_fetch_data(dx, got);
  for (i = 0, m = 0; i < NN; i++) m = fmax(m, fabs(got[i] - xs[i]));
  CHECK(m < 1e-7);
  its = op_solve(S, db, dx, "-ksp_type gmres -ksp_gmres_restart 1000000000000 -ksp_rtol 1e-10");
  CHECK_OK();
  CHECK(its > 0 && its <= NN + 5);
  op_fetch_data(dx, got);
  for (i = 0, m = 0; i < NN; i++) m = fmax(m, fabs(got[i] - xs[i]));
  CHECK(m < 1e-7);

  /* b = 0: x = 0 at once (x held the solution before) */
  op_dat dz = op_decl_dat(nodes, 1, "double", NULL, "zero");
  CHECK_INT(op_solve(S, dz, dx, "-ksp_type gmres"), 0);
  CHECK_OK();
  op_fetch_data(dx, got);
  for (i = 0; i < NN; i++) CHECK_DBL(got[i], 0.0);

  /* singular but consistent (b = L x*): a solution exists, and is found */
  op_mat_mult(L, dxs, db);
  op_solve(L, db, dx, "-ksp_type gmres -pc_type none -ksp_rtol 1e-10");
  CHECK_OK();
  op_solve(L, db, dx, "-ksp_type cg -ksp_rtol 1e-10");
  CHECK_OK();

  /* singular and inconsistent: no x does better than 1/sqrt(NN) */
  op_set_error_handler(OP_ERRORS_RETURN);
  /* (GMRES with Jacobi and a restart of NN broke down and reported success: 40 iterations) */
  const char *opts[] = {"-ksp_type gmres -ksp_gmres_restart 40", "-ksp_type gmres -pc_type none", "-ksp_type gmres",
                        "-ksp_type gmres -ksp_gmres_restart 5", "-ksp_type cg -ksp_max_it 500"};
  const char *names[] = {"gmres with jacobi", "gmres with none", "gmres with jacobi", "gmres with jacobi",
                         "cg with jacobi"};
  for (i = 0; i < COUNT_OF(opts); i++) {
    CHECK_INT(op_solve(L, de0, dx, opts[i]), -1);
    CHECK_ERR(OP2_ERR_SOLVE, "op_solve", "mat 'L'", names[i], "iterations", "true residual |b - Ax|/|b| = ");
    if (!(reported_residual() >= 0.999 / sqrt(NN)))
      test_fail_(__FILE__, __LINE__, "%s: true residual %g < 1/sqrt(%d): %s", opts[i], reported_residual(), NN,
                 op_last_error_message());
  }
  /* PETSc (builds with it): the same verdict */
  LEAKS_IGNORED(op_solve(S, db, dx, "-op2_petsc -ksp_rtol 1e-10"));
  if (op_last_error_code() == 0) {
    LEAKS_IGNORED(its = op_solve(L, de0, dx, "-op2_petsc -ksp_type gmres -ksp_max_it 300"));
    CHECK_INT(its, -1);
    CHECK_ERR(OP2_ERR_SOLVE, "op_solve", "mat 'L'", "PETSc", "true residual |b - Ax|/|b| = ");
    CHECK(reported_residual() >= 0.999 / sqrt(NN));
  } else {
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_solve", "needs PETSc");
  }
  LEAKS_IGNORED_FROM_HERE();
  op_exit();
  return 0;
}
