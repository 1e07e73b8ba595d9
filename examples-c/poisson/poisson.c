/* Poisson's equation with P1 finite elements on op2's matrices.
 *
 *   -laplace(u) = f on the unit square, u = 0 on its boundary, f = 2 pi^2 sin(pi x) sin(pi y),
 *   exact solution u = sin(pi x) sin(pi y).
 *
 * The mesh is generated here: N x N squares, two triangles each, interior nodes jittered by up
 * to 0.1 h (on the regular mesh the nodal sin-sin vector is an eigenvector of the stiffness
 * matrix and CG converges in one step, which would show nothing). The stiffness matrix is
 * assembled by an op_par_loop with op_arg_mat (boundary rows and columns zeroed by the kernel,
 * then op_mat_zero_rows puts 1 on their diagonal: symmetric elimination); the load vector is
 * lumped (f at the nodes times a third of each triangle's area), by an indirect OP_INC loop.
 *
 * usage: poisson [--check] [--time] [--solver "PETSc options"] [N...]    (default N: 16 32 64)
 *   For each N: nodes, entries, iterations, max nodal error, rms nodal error and the ratio of
 *   the rms errors of consecutive sizes (4 for second order). --check: exits 1 unless every
 *   ratio of both errors is at least 3.6 (second order), and also solves with PETSc's GAMG
 *   (in builds with PETSc) and checks it agrees with the native solve. --time: also prints the
 *   wall time of the assembly (the stiffness loop and op_mat_zero_rows) and of the solve, each
 *   ended by a barrier (so the slowest process's).
 * The backend comes from OP2_BACKEND (or an OP2_BACKEND=... argument).
 *
 * An OP2 MPI program: under `mpiexec -n P` each process declares its block of nodes and cells
 * (global map values), op_partition partitions with METIS, errors come from global reductions
 * in loops, and only process 0 prints; the same program runs as one process. */
#include <op2.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *src_stiff =
    "void stiff(const double **x, const int **bnd, double *A)\n"
    "{\n"
    "  double b[3] = {x[1][1] - x[2][1], x[2][1] - x[0][1], x[0][1] - x[1][1]};\n"
    "  double c[3] = {x[2][0] - x[1][0], x[0][0] - x[2][0], x[1][0] - x[0][0]};\n"
    "  double a2 = fabs(x[0][0] * b[0] + x[1][0] * b[1] + x[2][0] * b[2]);\n"
    "  for (int i = 0; i < 3; i++)\n"
    "    for (int j = 0; j < 3; j++)\n"
    "      A[3 * i + j] = (*bnd[i] || *bnd[j]) ? 0.0 : (b[i] * b[j] + c[i] * c[j]) / (2.0 * a2);\n"
    "}\n";

static const char *src_err =
    "void err(const double *x, const double *u, double *emax, double *esq)\n"
    "{\n"
    "  double e = fabs(*u - sin(M_PI * x[0]) * sin(M_PI * x[1]));\n"
    "  *emax = fmax(*emax, e);\n"
    "  *esq += e * e;\n"
    "}\n";

static const char *src_diff =
    "void diff(const double *a, const double *b, double *d) { *d = fmax(*d, fabs(*a - *b)); }\n";

static const char *src_load =
    "void load(const double **x, const int **bnd, double **f)\n"
    "{\n"
    "  double area = 0.5 * fabs((x[1][0] - x[0][0]) * (x[2][1] - x[0][1])\n"
    "                           - (x[2][0] - x[0][0]) * (x[1][1] - x[0][1]));\n"
    "  for (int i = 0; i < 3; i++)\n"
    "    if (!*bnd[i])\n"
    "      *f[i] += area / 3.0 * 2.0 * M_PI * M_PI * sin(M_PI * x[i][0]) * sin(M_PI * x[i][1]);\n"
    "}\n";

/* A repeatable jitter in [-1, 1] for node n. */
static double jitter(int n, int k)
{
  double v = sin(12.9898 * n + 78.233 * k) * 43758.5453;
  return 2.0 * (v - floor(v)) - 1.0;
}

struct result {
  int nodes, its;
  long long nnz;
  double emax, erms, t_assemble, t_solve;
};

/* Wall-clock seconds now (after a barrier: every process is there). */
static double wall_now(void)
{
  double cpu, et;
  op_mpi_barrier();
  op_timers(&cpu, &et);
  return et;
}

/* What the PETSc comparison found, printed after the size's line. */
static char petsc_note[512];

/* One mesh's declarations (every mesh is declared before op_partition). */
struct mesh {
  int n, nn, nb, *brows;
  op_set nodes, cells;
  op_map pcell;
  op_dat dxy, dbnd, df, du, dv;
  op_mat A;
};

static void declare_one(int n, struct mesh *m)
{
  int nn = (n + 1) * (n + 1), nc = 2 * n * n, i, j, c = 0, nb = 0;
  int *c2n = malloc(sizeof(int) * 3 * nc), *bnd = malloc(sizeof(int) * nn), *brows = malloc(sizeof(int) * nn);
  double *xy = malloc(sizeof(double) * 2 * nn), h = 1.0 / n;
  char name[64];
  int rank = 0, np = op_num_ranks(), n0, nnb, c0, ncb;
  op_sparsity sp;

  for (j = 0; j <= n; j++)
    for (i = 0; i <= n; i++) {
      int k = j * (n + 1) + i;
      bnd[k] = i == 0 || j == 0 || i == n || j == n;
      xy[2 * k] = i * h + (bnd[k] ? 0.0 : 0.1 * h * jitter(k, 0));
      xy[2 * k + 1] = j * h + (bnd[k] ? 0.0 : 0.1 * h * jitter(k, 1));
      if (bnd[k]) brows[nb++] = k;
    }
  for (j = 0; j < n; j++)
    for (i = 0; i < n; i++) {
      int n0 = j * (n + 1) + i, n1 = n0 + 1, n2 = n0 + n + 1, n3 = n2 + 1;
      c2n[3 * c] = n0, c2n[3 * c + 1] = n1, c2n[3 * c + 2] = n3, c++;
      c2n[3 * c] = n0, c2n[3 * c + 1] = n3, c2n[3 * c + 2] = n2, c++;
    }
  /* Each process declares its block of every set (the whole mesh on one process); map values
   * are global node numbers. */
  op_rank(&rank);
  n0 = (int)((long long)nn * rank / np), nnb = (int)((long long)nn * (rank + 1) / np) - n0;
  c0 = (int)((long long)nc * rank / np), ncb = (int)((long long)nc * (rank + 1) / np) - c0;
  m->n = n, m->nn = nn, m->nb = nb, m->brows = brows;
  snprintf(name, sizeof name, "nodes%d", n);
  m->nodes = op_decl_set(nnb, name);
  snprintf(name, sizeof name, "cells%d", n);
  m->cells = op_decl_set(ncb, name);
  m->pcell = op_decl_map(m->cells, m->nodes, 3, c2n + 3 * c0, "pcell");
  m->dxy = op_decl_dat(m->nodes, 2, "double", xy + 2 * n0, "xy");
  m->dbnd = op_decl_dat(m->nodes, 1, "int", bnd + n0, "bnd");
  m->df = op_decl_dat(m->nodes, 1, "double", NULL, "f");
  m->du = op_decl_dat(m->nodes, 1, "double", NULL, "u");
  m->dv = op_decl_dat(m->nodes, 1, "double", NULL, "v");
  sp = op_decl_sparsity(m->pcell, m->pcell, "sp");
  m->A = op_decl_mat(sp, 1, 1, "double", "A");
  free(c2n);
  free(bnd);
  free(xy);
}

static int solve_one(struct mesh *m, const char *solver, struct result *r, const char *petsc_options)
{
  op_set nodes = m->nodes, cells = m->cells;
  op_map pcell = m->pcell;
  op_dat dxy = m->dxy, dbnd = m->dbnd, df = m->df, du = m->du, dv = m->dv;
  op_mat A = m->A;
  int nn = m->nn;
  double t0 = wall_now();
  {
    op_arg args[] = {op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ), op_arg_dat(dbnd, -3, pcell, 1, "int", OP_READ),
                     op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC)};
    op_par_loop(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, 3, args);
  }
  op_mat_zero_rows(A, m->nb, m->brows, 1.0);
  free(m->brows);
  op_mat_assemble(A);
  r->t_assemble = wall_now() - t0;
  {
    op_arg args[] = {op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ), op_arg_dat(dbnd, -3, pcell, 1, "int", OP_READ),
                     op_arg_dat(df, -3, pcell, 1, "double", OP_INC)};
    op_par_loop(op_decl_kernel(src_load, "load"), "load", cells, 3, args);
  }
  t0 = wall_now();
  r->its = op_solve(A, df, du, solver);
  r->t_solve = wall_now() - t0;
  if (r->its < 0) return 1;
  r->nodes = nn;
  r->nnz = op_mat_nnz(A);
  /* Nodal errors by a loop with global reductions (every process gets the same). */
  r->emax = 0;
  r->erms = 0;
  {
    op_arg args[] = {op_arg_dat(dxy, -1, OP_ID, 2, "double", OP_READ), op_arg_dat(du, -1, OP_ID, 1, "double", OP_READ),
                     op_arg_gbl(&r->emax, 1, "double", OP_MAX), op_arg_gbl(&r->erms, 1, "double", OP_INC)};
    op_par_loop(op_decl_kernel(src_err, "err"), "err", nodes, 4, args);
  }
  r->erms = sqrt(r->erms / nn);
  if (petsc_options) {
    /* The same system through PETSc: the solutions agree to the solver tolerance. */
    int its = op_solve(A, df, dv, petsc_options);
    double d = 0;
    if (its < 0) {
      if (op_last_error_code() != OP2_ERR_BACKEND_UNAVAILABLE) return 1;
      snprintf(petsc_note, sizeof petsc_note, "    (PETSc: %s)\n", op_last_error_message());
    } else {
      op_arg args[] = {op_arg_dat(du, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(dv, -1, OP_ID, 1, "double", OP_READ),
                       op_arg_gbl(&d, 1, "double", OP_MAX)};
      op_par_loop(op_decl_kernel(src_diff, "diff"), "diff", nodes, 3, args);
      snprintf(petsc_note, sizeof petsc_note, "    PETSc '%s': %d iterations, max difference from native %.2e\n",
               petsc_options, its, d);
      if (!(d < 1e-7)) return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  int sizes[16], ns = 0, check = 0, i, bad = 0, timed = 0;
  const char *solver = "-ksp_type cg -pc_type jacobi -ksp_rtol 1e-10";
  char *init_args[16];
  int nargs = 0, root;
  struct result res[16];
  struct mesh meshes[16];

  init_args[nargs++] = argv[0];
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--check") == 0)
      check = 1;
    else if (strcmp(argv[i], "--time") == 0)
      timed = 1;
    else if (strcmp(argv[i], "--solver") == 0 && i + 1 < argc)
      solver = argv[++i];
    else if (strncmp(argv[i], "OP2_", 4) == 0 && nargs < 16)
      init_args[nargs++] = argv[i];
    else if (atoi(argv[i]) > 1 && ns < 16)
      sizes[ns++] = atoi(argv[i]);
    else {
      fprintf(stderr, "usage: %s [--check] [--time] [--solver \"PETSc options\"] [N...]\n", argv[0]);
      return 2;
    }
  }
  if (ns == 0) sizes[ns++] = 16, sizes[ns++] = 32, sizes[ns++] = 64;
  op_init(nargs, init_args, 0);
  root = op_is_root();
  if (root) {
    printf("P1 Poisson, jittered mesh, solver '%s', %d process%s\n", solver, op_num_ranks(),
           op_num_ranks() > 1 ? "es" : "");
    printf("%6s %9s %10s %6s %14s %14s %7s %7s\n", "N", "nodes", "entries", "its", "max error", "rms error",
           "ratio", "rate");
  }
  for (i = 0; i < ns; i++) declare_one(sizes[i], &meshes[i]);
  /* One partition for every mesh: BLOCK keeps the declared blocks (METIS and RCB partition one
   * prime set and derive the others through maps, which cannot reach the other meshes). */
  op_partition("BLOCK", NULL, meshes[0].cells, OP_ID, NULL);
  for (i = 0; i < ns; i++) {
    if (solve_one(&meshes[i], solver, &res[i], check ? "-ksp_type cg -pc_type gamg -ksp_rtol 1e-10" : NULL)) {
      fprintf(stderr, "poisson: N=%d failed: %s\n", sizes[i], op_last_error_message());
      return 1;
    }
    if (i == 0) {
      if (root)
        printf("%6d %9d %10lld %6d %14.8e %14.8e\n", sizes[i], res[i].nodes, res[i].nnz, res[i].its, res[i].emax,
             res[i].erms);
    } else {
      double ratio = res[i - 1].erms / res[i].erms, rmax = res[i - 1].emax / res[i].emax;
      double rate = log(ratio) / log((double)sizes[i] / sizes[i - 1]);
      if (root)
        printf("%6d %9d %10lld %6d %14.8e %14.8e %7.2f %7.2f\n", sizes[i], res[i].nodes, res[i].nnz, res[i].its,
             res[i].emax, res[i].erms, ratio, rate);
      if (sizes[i] == 2 * sizes[i - 1] && (ratio < 3.6 || rmax < 3.6)) bad = 1;
    }
    if (root) fputs(petsc_note, stdout);
    if (root && timed)
      printf("    time: assembly %.4f s, solve %.4f s (%d iterations)\n", res[i].t_assemble, res[i].t_solve, res[i].its);
    petsc_note[0] = '\0';
  }
  op_exit();
  if (check && bad) {
    fprintf(stderr, "poisson: the error does not fall by 4 when h halves (not second order)\n");
    return 1;
  }
  return 0;
}
