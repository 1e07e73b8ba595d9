/* Matrices under MPI, against a reference assembled here in global numbering: a quad grid,
 * element matrices (stiffness-like + cell-weighted mass + a nodal diagonal term, so the loop
 * reads a direct cell dat and node coordinates through the exec and non-exec halos) assembled
 * by op_par_loop with op_arg_mat into a scalar matrix A and a 2x2-block matrix B. Checked for
 * every partitioner (sparsities declared before op_partition, and a run that never calls it):
 * op_mat_nnz (global), op_fetch_mat_csr (this process's declared rows, original numbering),
 * op_mat_mult, native CG and GMRES solves equal to the exact vector within tolerance (so equal
 * to the one-process result), PETSc CG + GAMG on the distributed (MPIAIJ) matrix where PETSc
 * is built in, op_mat_zero_rows with rows given by different processes, and a second assembly
 * after op_mat_zero; and a one-cell grid, where some processes own no rows (empty local
 * matrices take part in every collective, PETSc's included). The program initialises MPI itself.
 * usage: t870-mpi-mat BACKEND [NX NY]
 * mpi-backends: seq threads check opencl
 * mpi-n: 1 2 3 4 */
#include "test.h"
#include "grid.h"
#include <math.h>
#include <mpi.h>

static const char *k_elem =
    "void elem(const double *c, const double **x, double *A) {\n"
    "  double w = 1.0 + 0.1 * c[0] + 0.01 * c[1];\n"
    "  for (int i = 0; i < 4; i++)\n"
    "    for (int j = 0; j < 4; j++)\n"
    "      A[4 * i + j] = (i == j ? 3.0 : -1.0) * 0.25 + w * (i == j ? 4.0 : 1.0) / 36.0\n"
    "                     + (i == j ? 0.01 * (1.0 + x[i][0]) : 0.0);\n"
    "}\n";
static const char *k_belem =
    "void belem(const double *c, const double **x, double *B) {\n"
    "  for (int i = 0; i < 4; i++)\n"
    "    for (int a = 0; a < 2; a++)\n"
    "      for (int j = 0; j < 4; j++)\n"
    "        for (int b = 0; b < 2; b++)\n"
    "          B[(2 * i + a) * 8 + 2 * j + b] = (1.0 + a + 2 * b) * (c[0] + 0.5 * x[j][1]) + (i == j);\n"
    "}\n";

/* The element value of A at local (i, j) of cell with centre (cx, cy) and node x-coordinate xi. */
static double a_elem(double cx, double cy, double xi, int i, int j)
{
  double w = 1.0 + 0.1 * cx + 0.01 * cy;
  return (i == j ? 3.0 : -1.0) * 0.25 + w * (i == j ? 4.0 : 1.0) / 36.0 + (i == j ? 0.01 * (1.0 + xi) : 0.0);
}

/* Checks this process's fetched rows [r0, r0 + nr) against the dense reference (nz: pattern). */
static void check_rows(op_mat m, int r0, int nr, int ncols, const double *ref, const char *nz, long long gnnz)
{
  int *rp = malloc(sizeof(int) * (size_t)(nr + 1)), r, k, c;
  CHECK_OK();
  rp[nr] = -1;
  op_fetch_mat_csr(m, rp, NULL, NULL);
  CHECK_OK();
  CHECK_INT(rp[0], 0);
  int nnz = rp[nr];
  int *ci = malloc(sizeof(int) * (size_t)(nnz + 1));
  double *v = malloc(sizeof(double) * (size_t)(nnz + 1));
  op_fetch_mat_csr(m, rp, ci, v);
  CHECK_OK();
  long long want = 0, total = 0;
  for (r = 0; r < nr; r++) {
    k = rp[r];
    for (c = 0; c < ncols; c++) {
      if (!nz[(size_t)(r0 + r) * ncols + c]) continue;
      want++;
      CHECK(k < rp[r + 1]);
      CHECK_INT(ci[k], c);
      CHECK_NEAR(v[k], ref[(size_t)(r0 + r) * ncols + c], 1e-12);
      k++;
    }
    CHECK_INT(k, rp[r + 1]);
  }
  CHECK_INT(nnz, (int)want);
  MPI_Allreduce(&want, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_INT((int)total, (int)gnnz);
  CHECK_INT((int)op_mat_nnz(m), (int)gnnz);
  free(rp);
  free(ci);
  free(v);
}

static void run(const char *backend, const char *lib, const char *routine, int nx, int ny)
{
  grid g;
  int rank, p, i, j, a, b, c, its;
  char token[128];
  char *args[2];
  grid_make(&g, nx, ny);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  args[0] = (char *)"t870";
  args[1] = token;
  op_init(2, args, 0);
  int N = g.nnode;
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(N, rank, p), nn = block_n(N, rank, p);
  op_set cells = op_decl_set(nc, "cells");
  op_set nodes = op_decl_set(nn, "nodes");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  double *xs = malloc(sizeof(double) * (size_t)N);
  for (i = 0; i < N; i++) xs[i] = 2.0 + sin(0.37 * i);
  op_dat dxs = op_decl_dat(nodes, 1, "double", xs + n0, "xs");
  op_dat dy = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_dat du = op_decl_dat(nodes, 1, "double", NULL, "u");
  op_sparsity sp = op_decl_sparsity(pcell, pcell, "sp");
  op_mat A = op_decl_mat(sp, 1, 1, "double", "A");
  op_mat B = op_decl_mat(sp, 2, 2, "double", "B");
  CHECK_OK();
  if (lib) {
    if (strcmp(lib, "RCB") == 0)
      op_partition(lib, routine, cells, OP_ID, cx);
    else
      op_partition(lib, routine, cells, pcell, NULL);
    CHECK_OK();
  }
  op_kernel ke = op_decl_kernel(k_elem, "elem"), kb = op_decl_kernel(k_belem, "belem");
  for (int pass = 0; pass < 2; pass++) {
    /* The second pass assembles again after op_mat_zero: the same matrix. */
    if (pass) op_mat_zero(A);
    PAR_LOOP(ke, "elem", cells, op_arg_dat(cx, -1, OP_ID, 2, "double", OP_READ),
             op_arg_dat(x, -4, pcell, 2, "double", OP_READ), op_arg_mat(A, -4, pcell, -4, pcell, "double", OP_INC));
    CHECK_OK();
  }
  op_mat_assemble(A);
  PAR_LOOP(kb, "belem", cells, op_arg_dat(cx, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(x, -4, pcell, 2, "double", OP_READ), op_arg_mat(B, -4, pcell, -4, pcell, "double", OP_INC));
  CHECK_OK();

  /* The reference, dense, in global numbering. */
  double *ref = calloc((size_t)N * N, sizeof(double)), *bref = calloc((size_t)4 * N * N, sizeof(double));
  char *nz = calloc((size_t)N * N, 1), *bnz = calloc((size_t)4 * N * N, 1);
  long long gnnz = 0;
  for (c = 0; c < g.ncell; c++)
    for (i = 0; i < 4; i++)
      for (j = 0; j < 4; j++) {
        int r = g.cnode[4 * c + i], s = g.cnode[4 * c + j];
        ref[(size_t)r * N + s] += a_elem(g.cx[2 * c], g.cx[2 * c + 1], g.x[2 * r], i, j);
        nz[(size_t)r * N + s] = 1;
        for (a = 0; a < 2; a++)
          for (b = 0; b < 2; b++) {
            size_t k = (size_t)(2 * r + a) * 2 * N + 2 * s + b;
            bref[k] += (1.0 + a + 2 * b) * (g.cx[2 * c] + 0.5 * g.x[2 * s + 1]) + (i == j);
            bnz[k] = 1;
          }
      }
  for (i = 0; i < N * N; i++) gnnz += nz[i];
  check_rows(A, n0, nn, N, ref, nz, gnnz);
  check_rows(B, 2 * n0, 2 * nn, 2 * N, bref, bnz, 4 * gnnz);

  /* SpMV: y = A xs. */
  double *y = malloc(sizeof(double) * (size_t)N), *got = malloc(sizeof(double) * (size_t)(nn + 1));
  for (i = 0; i < N; i++) {
    y[i] = 0;
    for (j = 0; j < N; j++) y[i] += ref[(size_t)i * N + j] * xs[j];
  }
  op_mat_mult(A, dxs, dy);
  CHECK_OK();
  op_fetch_data(dy, got);
  for (i = 0; i < nn; i++) CHECK_NEAR(got[i], y[n0 + i], 1e-12 * fabs(y[n0 + i]) + 1e-13);

  /* Solves of A u = y: u = xs within the tolerance, whatever the number of processes. */
  const char *solvers[] = {"-ksp_type cg -pc_type jacobi -ksp_rtol 1e-12", "-ksp_type gmres -pc_type none -ksp_rtol 1e-12",
                           "-ksp_type cg -pc_type gamg -ksp_rtol 1e-12"};
  op_set_error_handler(OP_ERRORS_RETURN);
  for (int k = 0; k < 3; k++) {
    its = op_solve(A, dy, du, solvers[k]);
    if (k == 2 && its < 0 && op_last_error_code() == OP2_ERR_BACKEND_UNAVAILABLE) break; /* no PETSc */
    CHECK_OK();
    CHECK(its > 0 && its < 500);
    op_fetch_data(du, got);
    for (i = 0; i < nn; i++) CHECK_NEAR(got[i], xs[n0 + i], 1e-8);
  }
  /* Not converging is an error on every process, with the (global) true residual. */
  its = op_solve(A, dy, du, "-ksp_type cg -pc_type none -ksp_rtol 1e-14 -ksp_max_it 2");
  CHECK_ERR(OP2_ERR_SOLVE, "op_solve", "did not converge in 2 iterations", "true residual |b - Ax|/|b| = ");
  {
    /* the same value on every process */
    const char *at = strstr(op_last_error_message(), "|b - Ax|/|b| = ");
    double mine = at ? strtod(at + 15, NULL) : -1, lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(mine > 0 && lo == hi);
  }
  op_set_error_handler(OP_ERRORS_ABORT);

  /* Dirichlet rows on the boundary, each given by one process (rows it may not own). */
  int *rows = malloc(sizeof(int) * (size_t)N), nr = 0;
  char *isb = calloc((size_t)N, 1);
  for (i = 0; i < N; i++) {
    int ix = i % (nx + 1), iy = i / (nx + 1);
    isb[i] = ix == 0 || iy == 0 || ix == nx || iy == ny;
    if (isb[i] && i % p == (p - 1 - rank)) rows[nr++] = i;
  }
  op_mat_zero_rows(A, nr, rows, 2.5);
  CHECK_OK();
  for (i = 0; i < N; i++)
    if (isb[i])
      for (j = 0; j < N; j++) ref[(size_t)i * N + j] = i == j ? 2.5 : 0.0;
  check_rows(A, n0, nn, N, ref, nz, gnnz);
  rows[0] = N;
  op_set_error_handler(OP_ERRORS_RETURN);
  op_mat_zero_rows(A, rank == 0 ? 1 : 0, rows, 1.0);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_mat_zero_rows", "outside [0, ");
  op_set_error_handler(OP_ERRORS_ABORT);

  op_exit();
  free(rows);
  free(isb);
  free(y);
  free(got);
  free(ref);
  free(bref);
  free(nz);
  free(bnz);
  free(xs);
  grid_free(&g);
}

int main(int argc, char **argv)
{
  int nx = 11, ny = 7, init = 0;
  if (argc < 2) return 2;
  if (argc >= 4) {
    nx = atoi(argv[2]);
    ny = atoi(argv[3]);
  }
  MPI_Init(&argc, &argv);
  run(argv[1], NULL, NULL, nx, ny);
  run(argv[1], "RCB", NULL, nx, ny);
  run(argv[1], "METIS", "KWAY", nx, ny);
  run(argv[1], "RANDOM", NULL, nx, ny);
  run(argv[1], NULL, NULL, 1, 1);
  MPI_Initialized(&init);
  CHECK(init);
  MPI_Finalize();
  return 0;
}
