/* Halo exchanges on every backend, devices included (there the exchange goes through host
 * memory: owned rows come down, halo rows go up with the next upload): a dat written on the
 * device and then read through a map by another loop, an INC through the exec halo, a direct
 * read of a dirty edge dat by an exec-halo loop, and reductions, checked in global numbering.
 * A dat uploaded before op_partition is refused.
 * mpi-n: 1 2 3 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_q = "void qset(const double *c, double *q) { *q = c[0] + 100.0 * c[1]; }\n";
static const char *k_w = "void wset(const double *a, const double *b, double *w) { *w = *a - 2.0 * *b; }\n";
static const char *k_r = "void racc(const double *w, double *r0, double *r1, double *s) { *r0 += *w; *r1 -= *w; *s += *w; }\n";
static const char *k_m = "void mm(const double *q, double *mx, double *mn) { if (*q > *mx) *mx = *q; if (*q < *mn) *mn = *q; }\n";

int main(int argc, char **argv)
{
  grid g;
  int rank, p, e, it, i;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  /* a device copy made before op_partition would keep the old size: refused */
  test_init(argc, argv);
  if (p > 1 && !strcmp(argv[1], "opencl")) {
    op_set s1 = op_decl_set(2, "s1");
    op_dat d1 = op_decl_dat(s1, 1, "double", NULL, "d1");
    op_upload_dat(d1);
    op_set_error_handler(OP_ERRORS_RETURN);
    op_partition("BLOCK", NULL, s1, OP_ID, NULL);
    CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_partition", "'d1'", "upload after op_partition");
    op_set_error_handler(OP_ERRORS_ABORT);
  }
  op_exit();
  test_init(argc, argv);
  grid_make(&g, 16, 9);
  int c0 = block_lo(g.ncell, rank, p), e0 = block_lo(g.nedge, rank, p);
  op_set cells = op_decl_set(block_n(g.ncell, rank, p), "cells");
  op_set edges = op_decl_set(block_n(g.nedge, rank, p), "edges");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  op_dat q = op_decl_dat(cells, 1, "double", NULL, "q");
  op_dat w = op_decl_dat(edges, 1, "double", NULL, "w");
  op_dat r = op_decl_dat(cells, 1, "double", NULL, "r");
  op_partition("METIS", "KWAY", edges, pecell, NULL);
  op_kernel kq = op_decl_kernel(k_q, "qset"), kw = op_decl_kernel(k_w, "wset");
  op_kernel kr = op_decl_kernel(k_r, "racc"), km = op_decl_kernel(k_m, "mm");
  double *qv = (double *)malloc(sizeof(double) * (size_t)g.ncell), *want = (double *)calloc((size_t)g.ncell, sizeof(double));
  double *wv = (double *)malloc(sizeof(double) * (size_t)g.nedge), *got = (double *)malloc(sizeof(double) * (size_t)g.ncell);
  double stot = 0.0;
  for (i = 0; i < g.ncell; i++) qv[i] = g.cx[2 * i] + 100.0 * g.cx[2 * i + 1];
  for (e = 0; e < g.nedge; e++) wv[e] = qv[g.ecell[2 * e]] - 2.0 * qv[g.ecell[2 * e + 1]];
  for (it = 0; it < 3; it++) {
    double s = 0.5;
    PAR_LOOP(kq, "qset", cells, op_arg_dat(cx, -1, OP_ID, 2, "double", OP_READ), op_arg_dat(q, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(kw, "wset", edges, op_arg_dat(q, 0, pecell, 1, "double", OP_READ), op_arg_dat(q, 1, pecell, 1, "double", OP_READ),
             op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
    PAR_LOOP(kr, "racc", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ), op_arg_dat(r, 0, pecell, 1, "double", OP_INC),
             op_arg_dat(r, 1, pecell, 1, "double", OP_INC), op_arg_gbl(&s, 1, "double", OP_INC));
    for (e = 0; e < g.nedge; e++) {
      want[g.ecell[2 * e]] += wv[e];
      want[g.ecell[2 * e + 1]] -= wv[e];
    }
    stot = 0.5;
    for (e = 0; e < g.nedge; e++) stot += wv[e];
    CHECK_NEAR(s, stot, 1e-9 * fabs(stot) + 1e-9);
  }
  op_fetch_data_idx(r, got, 0, g.ncell - 1);
  for (i = 0; i < g.ncell; i++) CHECK_NEAR(got[i], want[i], 1e-9 * (fabs(want[i]) + 1.0));
  double mx = -1e300, mn = 1e300;
  PAR_LOOP(km, "mm", cells, op_arg_dat(q, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&mx, 1, "double", OP_MAX),
           op_arg_gbl(&mn, 1, "double", OP_MIN));
  CHECK_DBL(mx, qv[g.ncell - 1]);
  CHECK_DBL(mn, qv[0]);
  free(qv);
  free(want);
  free(wv);
  free(got);
  op_exit();
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
