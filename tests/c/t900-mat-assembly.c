/* Matrices: sparsity counts against a brute-force pattern computed here (one pair, two pairs,
 * rectangular, isolated rows), P1 stiffness assembled in a loop against a reference assembly
 * written here, 2x2 blocks (whole local block and one block per (ridx, cidx)), float matrices,
 * OP_WRITE, op_mat_zero / op_mat_zero_rows, and op_mat_mult against the CSR product summed
 * here in the same order (bitwise: SpMV is deterministic on every backend). On opencl, loops
 * with matrix arguments are OP2_ERR_BACKEND_UNAVAILABLE; SpMV still runs. */
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

/* Dense boolean pattern of (rows x cols) from map pairs, and the diagonal if asked. */
static void pattern(char *p, int ncols, const int *r, int rd, const int *c, int cd, int n)
{
  int e, i, j;
  for (e = 0; e < n; e++)
    for (i = 0; i < rd; i++)
      for (j = 0; j < cd; j++) p[r[e * rd + i] * ncols + c[e * cd + j]] = 1;
}

/* The fetched CSR has exactly the dense pattern, with sorted columns. */
static void check_pattern(op_mat m, const char *p, int nrows, int ncols)
{
  long long nnz = op_mat_nnz(m), want = 0;
  int *rp = malloc(sizeof(int) * (nrows + 1)), *ci, r, k = 0, c;
  for (r = 0; r < nrows * ncols; r++) want += p[r];
  CHECK_INT(nnz, want);
  ci = malloc(sizeof(int) * (size_t)(nnz + 1));
  op_fetch_mat_csr(m, rp, ci, NULL);
  CHECK_INT(rp[0], 0);
  for (r = 0; r < nrows; r++) {
    for (c = 0; c < ncols; c++)
      if (p[r * ncols + c]) {
        CHECK_INT(ci[k], c);
        k++;
      }
    CHECK_INT(rp[r + 1], k);
  }
  free(rp);
  free(ci);
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

static const char *src_stiff_f =
    "void stifff(const double **x, float *A)\n"
    "{\n"
    "  double b[3] = {x[1][1] - x[2][1], x[2][1] - x[0][1], x[0][1] - x[1][1]};\n"
    "  double c[3] = {x[2][0] - x[1][0], x[0][0] - x[2][0], x[1][0] - x[0][0]};\n"
    "  double a2 = fabs(x[0][0] * b[0] + x[1][0] * b[1] + x[2][0] * b[2]);\n"
    "  for (int i = 0; i < 3; i++)\n"
    "    for (int j = 0; j < 3; j++) A[3 * i + j] = (float)((b[i] * b[j] + c[i] * c[j]) / (2.0 * a2));\n"
    "}\n";

/* 2x2 blocks: entry (node i comp a, node j comp b) gets 1000*nid_i + nid_j + a/2 + b/4 + 1. */
static const char *src_blk =
    "void blk(const double **n, double *B)\n"
    "{\n"
    "  for (int i = 0; i < 3; i++) for (int a = 0; a < 2; a++)\n"
    "    for (int j = 0; j < 3; j++) for (int b = 0; b < 2; b++)\n"
    "      B[(2 * i + a) * 6 + 2 * j + b] = 1000.0 * n[i][0] + n[j][0] + 0.5 * a + 0.25 * b + 1.0;\n"
    "}\n";

static const char *src_blk1 =
    "void blk1(const double *ni, const double *nj, double *B)\n"
    "{\n"
    "  for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++)\n"
    "    B[2 * a + b] = 1000.0 * ni[0] + nj[0] + 0.5 * a + 0.25 * b + 1.0;\n"
    "}\n";

static const char *src_wr = "void wr(const double *v, double *D) { D[0] = 2.0 * v[0] + 0.5; }\n";

static double ref[NN][NN];
static double refb[2 * NN][2 * NN];

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

/* y = A x with the fetched CSR, summed in column order as op_mat_mult promises. */
static void csr_mult(op_mat m, int nrows, const double *x, double *y)
{
  long long nnz = op_mat_nnz(m);
  int *rp = malloc(sizeof(int) * (nrows + 1)), *ci = malloc(sizeof(int) * (size_t)nnz), r, k;
  double *v = malloc(sizeof(double) * (size_t)nnz);
  op_fetch_mat_csr(m, rp, ci, v);
  for (r = 0; r < nrows; r++) {
    double s = 0.0;
    for (k = rp[r]; k < rp[r + 1]; k++) s += v[k] * x[ci[k]];
    y[r] = s;
  }
  free(rp);
  free(ci);
  free(v);
}

int main(int argc, char **argv)
{
  const char *backend = test_init(argc, argv);
  int opencl = strcmp(backend, "opencl") == 0, e, i, j, a, b;
  static char pat[NN * NN], patr[NN * NC];
  static double xv[2 * NN], yv[2 * NN], yref[2 * NN];
  op_set nodes, cells, bnd;
  op_map pcell, pbnd, pself;
  op_dat dxy, dnid, dx, dy, dx2, dy2;
  op_sparsity s1, s2, sr, sself;
  op_mat A, Af, B, B1, R, D;

  mesh();
  nodes = op_decl_set(NN, "nodes");
  cells = op_decl_set(NC, "cells");
  bnd = op_decl_set(NB, "bnd");
  pcell = op_decl_map(cells, nodes, 3, cell2node, "pcell");
  pbnd = op_decl_map(bnd, nodes, 2, bnd2node, "pbnd");
  pself = op_decl_map(cells, cells, 1, cell_self, "pself");
  dxy = op_decl_dat(nodes, 2, "double", xy, "xy");
  dnid = op_decl_dat(nodes, 1, "double", nid, "nid");

  /* ---- sparsities ---- */
  s1 = op_decl_sparsity(pcell, pcell, "s1");
  A = op_decl_mat(s1, 1, 1, "double", "A");
  memset(pat, 0, sizeof pat);
  pattern(pat, NN, cell2node, 3, cell2node, 3, NC);
  for (i = 0; i < NN; i++) pat[i * NN + i] = 1; /* the isolated node keeps its diagonal */
  check_pattern(A, pat, NN, NN);
  {
    op_map rows[2] = {pcell, pbnd}, cols[2] = {pcell, pbnd};
    op_mat A2;
    s2 = op_decl_sparsity_pairs(2, rows, cols, "s2");
    A2 = op_decl_mat(s2, 1, 1, "double", "A2");
    pattern(pat, NN, bnd2node, 2, bnd2node, 2, NB); /* boundary edges add nothing new here */
    check_pattern(A2, pat, NN, NN);
  }
  /* Rectangular: node rows x cell columns (no diagonal added). */
  sr = op_decl_sparsity(pcell, pself, "sr");
  R = op_decl_mat(sr, 1, 1, "double", "R");
  memset(patr, 0, sizeof patr);
  pattern(patr, NC, cell2node, 3, cell_self, 1, NC);
  check_pattern(R, patr, NN, NC);

  /* ---- scalar stiffness ---- */
  memset(ref, 0, sizeof ref);
  for (e = 0; e < NC; e++)
    for (i = 0; i < 3; i++)
      for (j = 0; j < 3; j++) ref[cell2node[3 * e + i]][cell2node[3 * e + j]] += tri_entry(e, i, j);
  op_set_error_handler(OP_ERRORS_RETURN);
  PAR_LOOP(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
           op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC));
  if (opencl) {
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'stiff'", "not supported on the opencl backend");
    memset(ref, 0, sizeof ref); /* nothing was assembled */
  } else {
    CHECK_OK();
    check_values(A, NN, NN, &ref[0][0], 1e-13, 0);
    /* Row sums vanish, the matrix is symmetric. */
    for (i = 0; i < NN * NN; i++) {
      int r = i / NN, c = i % NN;
      CHECK_NEAR(ref[r][c], ref[c][r], 1e-14);
    }
    /* Assembling again adds; op_mat_zero clears. */
    PAR_LOOP(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
             op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC));
    for (i = 0; i < NN * NN; i++) (&ref[0][0])[i] *= 2.0;
    check_values(A, NN, NN, &ref[0][0], 1e-13, 0);
    op_mat_zero(A);
    for (i = 0; i < NN * NN; i++) (&ref[0][0])[i] *= 0.0;
    check_values(A, NN, NN, &ref[0][0], 0.0, 0);
    PAR_LOOP(op_decl_kernel(src_stiff, "stiff"), "stiff", cells, op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ),
             op_arg_mat(A, -3, pcell, -3, pcell, "double", OP_INC));
    for (e = 0; e < NC; e++)
      for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) ref[cell2node[3 * e + i]][cell2node[3 * e + j]] += tri_entry(e, i, j);

    /* float */
    Af = op_decl_mat(s1, 1, 1, "float", "Af");
    PAR_LOOP(op_decl_kernel(src_stiff_f, "stifff"), "stifff", cells,
             op_arg_dat(dxy, -3, pcell, 2, "double", OP_READ), op_arg_mat(Af, -3, pcell, -3, pcell, "float", OP_INC));
    CHECK_OK();
    check_values(Af, NN, NN, &ref[0][0], 1e-5, 1);

    /* 2x2 blocks, whole local block and one block at a time. */
    memset(refb, 0, sizeof refb);
    for (e = 0; e < NC; e++)
      for (i = 0; i < 3; i++)
        for (a = 0; a < 2; a++)
          for (j = 0; j < 3; j++)
            for (b = 0; b < 2; b++) {
              int ni = cell2node[3 * e + i], nj = cell2node[3 * e + j];
              refb[2 * ni + a][2 * nj + b] += 1000.0 * ni + nj + 0.5 * a + 0.25 * b + 1.0;
            }
    B = op_decl_mat(s1, 2, 2, "double", "B");
    CHECK_INT(op_mat_nnz(B), 4 * op_mat_nnz(A));
    PAR_LOOP(op_decl_kernel(src_blk, "blk"), "blk", cells, op_arg_dat(dnid, -3, pcell, 1, "double", OP_READ),
             op_arg_mat(B, -3, pcell, -3, pcell, "double", OP_INC));
    CHECK_OK();
    check_values(B, 2 * NN, 2 * NN, &refb[0][0], 0.0, 0);
    B1 = op_decl_mat(s1, 2, 2, "double", "B1");
    for (i = 0; i < 3; i++)
      for (j = 0; j < 3; j++)
        PAR_LOOP(op_decl_kernel(src_blk1, "blk1"), "blk1", cells, op_arg_dat(dnid, i, pcell, 1, "double", OP_READ),
                 op_arg_dat(dnid, j, pcell, 1, "double", OP_READ),
                 op_arg_mat(B1, i, pcell, j, pcell, "double", OP_INC));
    CHECK_OK();
    check_values(B1, 2 * NN, 2 * NN, &refb[0][0], 0.0, 0);

    /* OP_WRITE stores (a second loop overwrites, it does not add). */
    sself = op_decl_sparsity(pself, pself, "sself");
    D = op_decl_mat(sself, 1, 1, "double", "D");
    {
      static double cv[NC], dref[NC][NC];
      op_dat dc;
      for (i = 0; i < NC; i++) cv[i] = i;
      dc = op_decl_dat(cells, 1, "double", cv, "cv");
      PAR_LOOP(op_decl_kernel(src_wr, "wr"), "wr", cells, op_arg_dat(dc, -1, OP_ID, 1, "double", OP_READ),
               op_arg_mat(D, 0, pself, 0, pself, "double", OP_WRITE));
      PAR_LOOP(op_decl_kernel(src_wr, "wr"), "wr", cells, op_arg_dat(dc, -1, OP_ID, 1, "double", OP_READ),
               op_arg_mat(D, 0, pself, 0, pself, "double", OP_WRITE));
      CHECK_OK();
      memset(dref, 0, sizeof dref);
      for (i = 0; i < NC; i++) dref[i][i] = 2.0 * i + 0.5;
      check_values(D, NC, NC, &dref[0][0], 0.0, 0);
    }
  }

  /* ---- Dirichlet rows ---- */
  {
    int rows[2] = {0, NN - 2};
    op_mat_zero_rows(A, 2, rows, 3.0);
    CHECK_OK();
    for (j = 0; j < NN; j++) ref[0][j] = ref[NN - 2][j] = 0.0;
    ref[0][0] = ref[NN - 2][NN - 2] = 3.0;
    check_values(A, NN, NN, &ref[0][0], opencl ? 0.0 : 1e-13, 0);
  }

  /* ---- SpMV: bitwise the CSR product in column order, on every backend ---- */
  for (i = 0; i < NN; i++) xv[i] = sin(1.0 + i);
  dx = op_decl_dat(nodes, 1, "double", xv, "x");
  dy = op_decl_dat(nodes, 1, "double", NULL, "y");
  op_mat_mult(A, dx, dy);
  CHECK_OK();
  op_fetch_data(dy, yv);
  csr_mult(A, NN, xv, yref);
  for (i = 0; i < NN; i++) CHECK_DBL(yv[i], yref[i]);
  /* and close to the dense product */
  for (i = 0; i < NN; i++) {
    double s = 0;
    for (j = 0; j < NN; j++) s += ref[i][j] * xv[j];
    CHECK_NEAR(yv[i], s, 1e-12);
  }
  if (!opencl) {
    for (i = 0; i < 2 * NN; i++) xv[i] = cos(0.5 * i);
    dx2 = op_decl_dat(nodes, 2, "double", xv, "x2");
    dy2 = op_decl_dat(nodes, 2, "double", NULL, "y2");
    op_mat_mult(B, dx2, dy2);
    op_fetch_data(dy2, yv);
    csr_mult(B, 2 * NN, xv, yref);
    for (i = 0; i < 2 * NN; i++) CHECK_DBL(yv[i], yref[i]);
  }
  op_mat_assemble(A);
  CHECK_OK();
  op_exit();
  return 0;
}
