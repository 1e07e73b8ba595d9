/* Matrices and op_renumber: a sparsity declared before op_renumber (rebuilt in the new storage
 * order) and one declared after; assembled in loops, both give the reference matrix in the
 * declared numbering through op_fetch_mat_csr; op_mat_zero_rows takes declared rows; op_mat_mult
 * gives the declared-order product. op_renumber after a matrix got values is OP2_ERR_BAD_LOOP. */
#include "test.h"

#define NX 7
#define NY 5
#define NN ((NX + 1) * (NY + 1) + 1) /* the last node belongs to no cell */
#define NC (2 * NX * NY)
#define NB (2 * (NX + NY)) /* boundary edges */

static int cell2node[3 * NC], bnd2node[2 * NB], cell_self[NC];
static double xy[2 * NN], nid[NN];

static void mesh(void)
{
  int i, j, c = 0, b = 0;
  for (j = 0; j <= NY; j++)
    for (i = 0; i <= NX; i++) {
      int n = j * (NX + 1) + i, interior = i > 0 && i < NX && j > 0 && j < NY;
      xy[2 * n] = (double)i / NX + (interior ? 0.03 * sin(7.0 * n) / NX : 0.0);
      xy[2 * n + 1] = (double)j / NY + (interior ? 0.03 * cos(5.0 * n) / NY : 0.0);
    }
  xy[2 * (NN - 1)] = 2.0;
  xy[2 * (NN - 1) + 1] = 2.0;
  for (j = 0; j < NY; j++)
    for (i = 0; i < NX; i++) {
      int n0 = j * (NX + 1) + i, n1 = n0 + 1, n2 = n0 + NX + 1, n3 = n2 + 1;
      cell2node[3 * c] = n0, cell2node[3 * c + 1] = n1, cell2node[3 * c + 2] = n3, c++;
      cell2node[3 * c] = n0, cell2node[3 * c + 1] = n3, cell2node[3 * c + 2] = n2, c++;
    }
  for (i = 0; i < NX; i++) {
    bnd2node[2 * b] = i, bnd2node[2 * b + 1] = i + 1, b++;
    bnd2node[2 * b] = NY * (NX + 1) + i, bnd2node[2 * b + 1] = NY * (NX + 1) + i + 1, b++;
  }
  for (j = 0; j < NY; j++) {
    bnd2node[2 * b] = j * (NX + 1), bnd2node[2 * b + 1] = (j + 1) * (NX + 1), b++;
    bnd2node[2 * b] = j * (NX + 1) + NX, bnd2node[2 * b + 1] = (j + 1) * (NX + 1) + NX, b++;
  }
  for (i = 0; i < NC; i++) cell_self[i] = i;
  for (i = 0; i < NN; i++) nid[i] = i;
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

static double ref[NN][NN];

static double tri_entry(int e, int i, int j)
{
  const int *n = cell2node + 3 * e;
  double b[3], c[3], a2;
  b[0] = xy[2 * n[1] + 1] - xy[2 * n[2] + 1];
  b[1] = xy[2 * n[2] + 1] - xy[2 * n[0] + 1];
  b[2] = xy[2 * n[0] + 1] - xy[2 * n[1] + 1];
  c[0] = xy[2 * n[2]] - xy[2 * n[1]];
  c[1] = xy[2 * n[0]] - xy[2 * n[2]];
  c[2] = xy[2 * n[1]] - xy[2 * n[0]];
  a2 = fabs(xy[2 * n[0]] * b[0] + xy[2 * n[1]] * b[1] + xy[2 * n[2]] * b[2]);
  return (b[i] * b[j] + c[i] * c[j]) / (2.0 * a2);
}

/* CSR values against a dense reference (relative tolerance), and every reference non-zero is
 * in the pattern. */
static void check_values(op_mat m, int nrows, int ncols, const double *dense, double tol, int is_float)
{
  long long nnz = op_mat_nnz(m);
  int *rp = malloc(sizeof(int) * (nrows + 1)), *ci = malloc(sizeof(int) * (size_t)nnz), r, k;
  double *v = malloc(sizeof(double) * (size_t)nnz), seen = 0, total = 0;
  float *vf = malloc(sizeof(float) * (size_t)nnz);
  op_fetch_mat_csr(m, rp, ci, is_float ? (void *)vf : (void *)v);
  for (r = 0; r < nrows; r++)
    for (k = rp[r]; k < rp[r + 1]; k++) {
      double got = is_float ? vf[k] : v[k], want = dense[r * ncols + ci[k]];
      CHECK_NEAR(got, want, tol * (1.0 + fabs(want)));
      seen += fabs(want);
    }
  for (r = 0; r < nrows * ncols; r++) total += fabs(dense[r]);
  CHECK_NEAR(seen, total, 1e-9 * total);
  free(rp);
  free(ci);
  free(v);
  free(vf);
}

int main(int argc, char **argv)
{
  const char *backend = test_init(argc, argv);
  int e, i, j, rows[1] = {5};
  static double xv[NN], yv[NN];
  op_set nodes, cells;
  op_map pcell;
  op_dat dxy, dx, dy;
  op_sparsity s1, s2;
  op_mat A1, A2, C;

  if (strcmp(backend, "opencl") == 0) { /* no matrix loops on opencl yet (t900 checks the error) */
    op_exit();
    return 0;
  }
  mesh();
  nodes = op_decl_set(NN, "nodes");
  cells = op_decl_set(NC, "cells");
  pcell = op_decl_map(cells, nodes, 3, cell2node, "pcell");
  dxy = op_decl_dat(nodes, 2, "double", xy, "xy");
  s1 = op_decl_sparsity(pcell, pcell, "s1");
  A1 = op_decl_mat(s1, 1, 1, "double", "A1");
  op_renumber(pcell);
  s2 = op_decl_sparsity(pcell, pcell, "s2");
  A2 = op_decl_mat(s2, 1, 1, "double", "A2");
  memset(ref, 0, sizeof ref);
  for (e = 0; e < NC; e++)
    for (i = 0; i < 3; i++)
      for (j = 0; j < 3; j++) ref[cell2node[3 * e + i]][cell2node[3 * e + j]] += tri_entry(e, i, j);
  PAR_LOOP(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
           op_arg_mat(A1, -3, pcell, -3, pcell, "double", OP_INC));
  PAR_LOOP(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
           op_arg_mat(A2, -3, pcell, -3, pcell, "double", OP_INC));
  check_values(A1, NN, NN, &ref[0][0], 1e-13, 0);
  check_values(A2, NN, NN, &ref[0][0], 1e-13, 0);
  op_mat_zero_rows(A1, 1, rows, 9.0);
  for (j = 0; j < NN; j++) ref[5][j] = 0.0;
  ref[5][5] = 9.0;
  check_values(A1, NN, NN, &ref[0][0], 1e-13, 0);
  for (i = 0; i < NN; i++) xv[i] = cos(0.7 * i);
  dx = op_decl_dat(nodes, 1, "double", xv, "x");
  dy = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_mat_mult(A1, dx, dy);
  op_fetch_data(dy, yv);
  for (i = 0; i < NN; i++) {
    double s = 0;
    for (j = 0; j < NN; j++) s += ref[i][j] * xv[j];
    CHECK_NEAR(yv[i], s, 1e-12);
  }
  op_exit();

  /* A matrix with values before op_renumber. */
  test_init(argc, argv);
  nodes = op_decl_set(NN, "nodes");
  cells = op_decl_set(NC, "cells");
  pcell = op_decl_map(cells, nodes, 3, cell2node, "pcell");
  C = op_decl_mat(op_decl_sparsity(pcell, pcell, "s"), 1, 1, "double", "C");
  op_mat_zero_rows(C, 1, rows, 1.0);
  op_set_error_handler(OP_ERRORS_RETURN);
  op_renumber(pcell);
  CHECK_ERR(OP2_ERR_BAD_LOOP, "op_renumber", "matrix 'C' already holds values");
  op_exit();
  return 0;
}
