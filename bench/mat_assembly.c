/* Matrix assembly and SpMV, op2 against PETSc, in one run (`make bench-mat`).
 *
 * The P1 stiffness matrix of an N x N square mesh (two triangles per square, jittered interior
 * nodes; N = 708 gives 1 002 528 cells and 502 681 nodes) is assembled
 *   - by op2: op_mat_zero, then an op_par_loop whose kernel fills the 3 x 3 local block of
 *     op_arg_mat (OP_INC), on the backend of OP2_BACKEND (threads in `make bench-mat`) and then
 *     on seq;
 *   - by a plain C loop computing the same local blocks (same formula, same flags) and calling
 *     PETSc's MatSetValues(ADD_VALUES) into a SeqAIJ matrix preallocated exactly (per-row counts
 *     from op2's sparsity), then MatAssemblyBegin/End; the first assembly (which inserts the
 *     column indices) and the later ones (MatZeroEntries first, pattern known) separately.
 * Both matrices are compared entry by entry. Then y = A x: op_mat_mult and PETSc's MatMult, in
 * GB/s (values and column indices once, row pointers, x and y once: the compulsory traffic),
 * against a STREAM triad a = b + s c on OMP_NUM_THREADS threads (3 arrays of 8 bytes per entry).
 * Each time is the best of REPEATS runs after a warm-up; the first op2 loop (code generation,
 * JIT and the element-to-slot table) and op_decl_sparsity are reported separately. */
#include <op2.h>
#include <petscmat.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPEATS 7

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static const char *src_stiff =
    "void stiff(const double **x, double *A)\n"
    "{\n"
    "  double b[3] = {x[1][1] - x[2][1], x[2][1] - x[0][1], x[0][1] - x[1][1]};\n"
    "  double c[3] = {x[2][0] - x[1][0], x[0][0] - x[2][0], x[1][0] - x[0][0]};\n"
    "  double a2 = fabs(x[0][0] * b[0] + x[1][0] * b[1] + x[2][0] * b[2]);\n"
    "  for (int i = 0; i < 3; i++)\n"
    "    for (int j = 0; j < 3; j++) A[3 * i + j] = (b[i] * b[j] + c[i] * c[j]) / (2.0 * a2);\n"
    "}\n";

/* The same kernel, compiled here for the plain C loop. */
static inline void stiff(const double *x0, const double *x1, const double *x2, double *A)
{
  double b[3] = {x1[1] - x2[1], x2[1] - x0[1], x0[1] - x1[1]};
  double c[3] = {x2[0] - x1[0], x0[0] - x2[0], x1[0] - x0[0]};
  double a2 = fabs(x0[0] * b[0] + x1[0] * b[1] + x2[0] * b[2]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) A[3 * i + j] = (b[i] * b[j] + c[i] * c[j]) / (2.0 * a2);
}

static double jitter(int n, int k)
{
  double v = sin(12.9898 * n + 78.233 * k) * 43758.5453;
  return 2.0 * (v - floor(v)) - 1.0;
}

static int cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double best(double *t, int n)
{
  qsort(t, (size_t)n, sizeof(double), cmp_dbl);
  return t[0];
}

struct op2_run {
  double sparsity, first, assembly, spmv;
};

/* op2 on the backend given by `token`; fills the CSR on the first call (rowptr, colidx, vals). */
static void run_op2(const char *token, int nn, int nc, const int *c2n, const double *xy, struct op2_run *r,
                    int **rowptr, int **colidx, double **vals, long long *nnz)
{
  char *args[2] = {"bench-mat", (char *)token};
  double t0, t[REPEATS], *x, *y;
  op_set nodes, cells;
  op_map pcell;
  op_dat dxy, dx, dy;
  op_sparsity sp;
  op_mat A;
  op_kernel k;
  int i;

  op_init(token ? 2 : 1, args, 0);
  nodes = op_decl_set(nn, "nodes");
  cells = op_decl_set(nc, "cells");
  pcell = op_decl_map(cells, nodes, 3, c2n, "pcell");
  dxy = op_decl_dat(nodes, 2, "double", xy, "xy");
  k = op_decl_kernel(src_stiff, "stiff");
  t0 = now();
  sp = op_decl_sparsity(pcell, pcell, "sp");
  r->sparsity = now() - t0;
  A = op_decl_mat(sp, 1, 1, "double", "A");
  for (i = -1; i < REPEATS; i++) {
    op_arg a[] = {op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ), op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC)};
    t0 = now();
    op_mat_zero(A);
    op_par_loop(k, "stiff", cells, 2, a);
    if (i < 0)
      r->first = now() - t0;
    else
      t[i] = now() - t0;
  }
  r->assembly = best(t, REPEATS);
  if (*rowptr == NULL) {
    *nnz = op_mat_nnz(A);
    *rowptr = malloc(sizeof(int) * (nn + 1));
    *colidx = malloc(sizeof(int) * (size_t)*nnz);
    *vals = malloc(sizeof(double) * (size_t)*nnz);
    op_fetch_mat_csr(A, *rowptr, *colidx, *vals);
  }
  x = malloc(sizeof(double) * nn);
  y = malloc(sizeof(double) * nn);
  for (i = 0; i < nn; i++) x[i] = sin(0.001 * i);
  dx = op_decl_dat(nodes, 1, "double", x, "x");
  dy = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_mat_mult(A, dx, dy);
  for (i = 0; i < REPEATS; i++) {
    t0 = now();
    op_mat_mult(A, dx, dy);
    t[i] = now() - t0;
  }
  r->spmv = best(t, REPEATS);
  free(x);
  free(y);
  op_exit();
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 708, nn, nc, i, j, c = 0, *c2n, *rowptr = NULL, *colidx = NULL, *nzr;
  double *xy, *vals = NULL, h, t0, t[REPEATS], petsc_first = 0, petsc_asm, petsc_mult, triad, maxdiff = 0, maxval = 0;
  long long nnz = 0;
  const char *backend = getenv("OP2_BACKEND") ? getenv("OP2_BACKEND") : "seq";
  struct op2_run o_main, o_seq;
  Mat P;
  Vec px, py;
  const PetscScalar *pv;

  if (n < 2) {
    fprintf(stderr, "usage: %s [N]   (N x N squares, 2 N^2 cells)\n", argv[0]);
    return 2;
  }
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  nn = (n + 1) * (n + 1);
  nc = 2 * n * n;
  h = 1.0 / n;
  xy = malloc(sizeof(double) * 2 * nn);
  c2n = malloc(sizeof(int) * 3 * nc);
  for (j = 0; j <= n; j++)
    for (i = 0; i <= n; i++) {
      int k = j * (n + 1) + i, b = i == 0 || j == 0 || i == n || j == n;
      xy[2 * k] = i * h + (b ? 0.0 : 0.1 * h * jitter(k, 0));
      xy[2 * k + 1] = j * h + (b ? 0.0 : 0.1 * h * jitter(k, 1));
    }
  for (j = 0; j < n; j++)
    for (i = 0; i < n; i++) {
      int n0 = j * (n + 1) + i, n1 = n0 + 1, n2 = n0 + n + 1, n3 = n2 + 1;
      c2n[3 * c] = n0, c2n[3 * c + 1] = n1, c2n[3 * c + 2] = n3, c++;
      c2n[3 * c] = n0, c2n[3 * c + 1] = n3, c2n[3 * c + 2] = n2, c++;
    }

  run_op2(NULL, nn, nc, c2n, xy, &o_main, &rowptr, &colidx, &vals, &nnz);
  run_op2("OP2_BACKEND=seq", nn, nc, c2n, xy, &o_seq, &rowptr, &colidx, &vals, &nnz);

  /* PETSc: exact preallocation, plain C loop, MatSetValues. */
  nzr = malloc(sizeof(int) * nn);
  for (i = 0; i < nn; i++) nzr[i] = rowptr[i + 1] - rowptr[i];
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, nn, nn, 0, nzr, &P));
  PetscCall(MatSetOption(P, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (i = -1; i < REPEATS; i++) {
    t0 = now();
    if (i >= 0) PetscCall(MatZeroEntries(P));
    for (c = 0; c < nc; c++) {
      const int *e = c2n + 3 * c;
      double A[9];
      stiff(xy + 2 * e[0], xy + 2 * e[1], xy + 2 * e[2], A);
      PetscCall(MatSetValues(P, 3, e, 3, e, A, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
    if (i < 0)
      petsc_first = now() - t0;
    else
      t[i] = now() - t0;
  }
  petsc_asm = best(t, REPEATS);
  {
    PetscInt pn;
    const PetscInt *pi, *pj;
    PetscBool done;
    PetscCall(MatGetRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &pn, &pi, &pj, &done));
    if (pn != nn || pi[nn] != nnz) {
      fprintf(stderr, "bench-mat: PETSc's pattern (%d rows, %d entries) differs from op2's\n", (int)pn, (int)pi[nn]);
      return 1;
    }
    for (i = 0; i < nnz; i++)
      if (pj[i] != colidx[i]) {
        fprintf(stderr, "bench-mat: PETSc's column %d differs from op2's\n", i);
        return 1;
      }
    PetscCall(MatRestoreRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &pn, &pi, &pj, &done));
  }
  PetscCall(MatSeqAIJGetArrayRead(P, &pv));
  for (i = 0; i < nnz; i++) {
    maxdiff = fmax(maxdiff, fabs(pv[i] - vals[i]));
    maxval = fmax(maxval, fabs(vals[i]));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(P, &pv));
  PetscCall(MatCreateVecs(P, &px, &py));
  PetscCall(VecSet(px, 0.5));
  PetscCall(MatMult(P, px, py));
  for (i = 0; i < REPEATS; i++) {
    t0 = now();
    PetscCall(MatMult(P, px, py));
    t[i] = now() - t0;
  }
  petsc_mult = best(t, REPEATS);

  /* STREAM triad on OMP_NUM_THREADS threads. */
  {
    long m = 8L * 1024 * 1024, q;
    double *a = malloc(sizeof(double) * m), *b = malloc(sizeof(double) * m), *cc = malloc(sizeof(double) * m);
#pragma omp parallel for schedule(static)
    for (q = 0; q < m; q++) a[q] = 0.0, b[q] = 1.0, cc[q] = 2.0;
    for (i = 0; i < REPEATS; i++) {
      t0 = now();
#pragma omp parallel for schedule(static)
      for (q = 0; q < m; q++) a[q] = b[q] + 3.0 * cc[q];
      t[i] = now() - t0;
    }
    triad = 3.0 * 8.0 * m / best(t, REPEATS) / 1e9;
    if (a[m / 2] != 7.0) return 1;
    free(a);
    free(b);
    free(cc);
  }

  {
    double bytes = nnz * 12.0 + (nn + 1) * 4.0 + nn * 16.0;
    printf("P1 stiffness, %d x %d squares: %d cells, %d nodes, %lld entries; best of %d runs\n", n, n, nc, nn, nnz,
           REPEATS);
    printf("op_decl_sparsity (%s): %.3f s; first op2 loop (JIT, slot table, assembly): %.3f s\n", backend,
           o_main.sparsity, o_main.first);
    printf("assembly  op2 %-8s %.4f s   op2 seq %.4f s   PETSc MatSetValues %.4f s (first, inserting: %.4f s)\n",
           backend, o_main.assembly, o_seq.assembly, petsc_asm, petsc_first);
    printf("ratio     op2 %s / PETSc = %.2f   op2 seq / PETSc = %.2f\n", backend, o_main.assembly / petsc_asm,
           o_seq.assembly / petsc_asm);
    printf("matrices  max |op2 - PETSc| = %.2e (max |entry| %.2e)\n", maxdiff, maxval);
    printf("SpMV      op2 %-8s %.2f GB/s (%.4f s)   op2 seq %.2f GB/s   PETSc MatMult %.2f GB/s   (%.0f MB per product)\n",
           backend, bytes / o_main.spmv / 1e9, o_main.spmv, bytes / o_seq.spmv / 1e9, bytes / petsc_mult / 1e9,
           bytes / 1e6);
    printf("STREAM    triad %.2f GB/s on %d thread(s); op2 %s SpMV at %.0f%% of it\n", triad, omp_get_max_threads(),
           backend, 100.0 * bytes / o_main.spmv / 1e9 / triad);
  }
  PetscCall(VecDestroy(&px));
  PetscCall(VecDestroy(&py));
  PetscCall(MatDestroy(&P));
  PetscCall(PetscFinalize());
  return maxdiff <= 1e-12 * maxval ? 0 : 1;
}
