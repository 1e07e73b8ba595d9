/* Loops under MPI, over every partitioner, checked against values computed here in global
 * numbering: the first indirect READ after declaration sees valid halos; an INC loop over edges
 * that reads an edge dat written by an earlier loop (exec-halo direct arguments) and counts its
 * iterations (reductions leave out the exec halo); non-exec halo reads after a write; INC with a
 * non-zero initial value, MIN/MAX with op_arg_info; op_arg_idx, fetches, sizes and offsets in
 * the original numbering; op_print_dat_to_txtfile / _binfile streamed through process 0 (whole
 * files compared, byte for byte; a dat of several 1 MiB pieces per process) and
 * op_fetch_data_idx of sub-ranges across block boundaries; a dat declared with data after
 * op_partition read through its halo. The program initialises MPI itself, so op2 must neither initialise
 * nor finalise it (a second session in the same process works).
 * usage: t800-mpi-loops BACKEND [NX NY]
 * mpi-backends: seq threads check opencl
 * mpi-n: 1 2 3 4 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_ids = "void ids(const int *i, int *out) { *out = *i; }\n";
static const char *k_ew = "void ew(const double *a, const double *b, double *w) { *w = a[0] + 1000.0 * b[1]; }\n";
static const char *k_res =
    "void res(const double *w, double *r0, double *r1, int *n) { *r0 += *w; *r1 += 2.0 * *w; *n += 1; }\n";
static const char *k_q = "void qset(const int *i, double *q) { *q = 0.5 * *i + 1.0; }\n";
static const char *k_nacc =
    "void nacc(const double *q0, const double *q1, double *a, double *b) {\n"
    "  a[0] += *q0; a[1] += *q1; b[0] += *q0; b[1] += *q1; }\n";
static const char *k_red =
    "void red(const int *i, int *cnt, int *mx, int *info, double *mn) {\n"
    "  *cnt += 1; if (*i > *mx) { *mx = *i; *info = 2 * *i; } if (0.5 * *i < *mn) *mn = 0.5 * *i; }\n";

#define BIG_N 6000
#define BIG_DIM 64

static int run(const char *backend, const char *lib, const char *routine, int nx, int ny)
{
  grid g;
  int rank, p, i, e;
  char token[128];
  char *args[2];
  grid_make(&g, nx, ny);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  snprintf(token, sizeof token, "OP2_BACKEND=%s", backend);
  args[0] = (char *)"t800";
  args[1] = token;
  op_init(2, args, 0);
  CHECK_INT(op_num_ranks(), p);
  {
    int r = -1;
    op_rank(&r);
    CHECK_INT(r, rank);
    CHECK_INT(op_is_root(), rank == 0);
  }
  int c0 = block_lo(g.ncell, rank, p), nc = block_n(g.ncell, rank, p);
  int n0 = block_lo(g.nnode, rank, p), nn = block_n(g.nnode, rank, p);
  int e0 = block_lo(g.nedge, rank, p), ne = block_n(g.nedge, rank, p);
  op_set cells = op_decl_set(nc, "cells");
  op_set nodes = op_decl_set(nn, "nodes");
  op_set edges = op_decl_set(ne, "edges");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_map pedge = op_decl_map(edges, nodes, 2, g.enode + 2 * e0, "pedge");
  op_map pcell = op_decl_map(cells, nodes, 4, g.cnode + 4 * c0, "pcell");
  (void)pcell;
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat cx = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx");
  op_dat cid = op_decl_dat(cells, 1, "int", NULL, "cid");
  op_dat w = op_decl_dat(edges, 1, "double", NULL, "w");
  op_dat r = op_decl_dat(cells, 1, "double", NULL, "r");
  op_dat q = op_decl_dat(cells, 1, "double", NULL, "q");
  op_dat na = op_decl_dat(nodes, 2, "double", NULL, "na");
  /* a dat of 3 MB on a set no map reaches: printed in several pieces per process */
  int b0 = block_lo(BIG_N, rank, p), nbig = block_n(BIG_N, rank, p);
  op_set bigset = op_decl_set(nbig, "bigset");
  double *bigv = (double *)malloc(sizeof(double) * BIG_DIM * (size_t)(nbig + 1));
  for (i = 0; i < nbig * BIG_DIM; i++) bigv[i] = (double)b0 * BIG_DIM + i + 0.25;
  op_dat big = op_decl_dat(bigset, BIG_DIM, "double", bigv, "big");
  free(bigv);
  CHECK_INT((int)op_get_size(cells), g.ncell);
  CHECK_INT((int)op_get_global_set_offset(edges), e0);
  if (routine && !strcmp(routine, "KWAY"))
    op_partition(lib, routine, edges, pecell, NULL);
  else
    op_partition(lib, routine, cells, OP_ID, cx);
  CHECK_OK();
  CHECK_INT((int)op_get_size(edges), g.nedge);
  CHECK_INT((int)op_get_global_set_offset(nodes), n0);
  /* declared with data after op_partition (this process's block): owned and halo rows */
  op_dat cx2 = op_decl_dat(cells, 2, "double", g.cx + 2 * c0, "cx2");
  op_dat w2 = op_decl_dat(edges, 1, "double", NULL, "w2");

  op_kernel kids = op_decl_kernel(k_ids, "ids"), kew = op_decl_kernel(k_ew, "ew");
  op_kernel kres = op_decl_kernel(k_res, "res"), kq = op_decl_kernel(k_q, "qset");
  op_kernel knacc = op_decl_kernel(k_nacc, "nacc"), kred = op_decl_kernel(k_red, "red");

  /* op_arg_idx: original global indices */
  PAR_LOOP(kids, "ids", cells, op_arg_idx(-1, OP_ID), op_arg_dat(cid, -1, OP_ID, 1, "int", OP_WRITE));
  int *ib = (int *)malloc(sizeof(int) * (size_t)(nc + 1));
  op_fetch_data(cid, ib);
  for (i = 0; i < nc; i++) CHECK_INT(ib[i], c0 + i);
  free(ib);

  /* first indirect READ after declaration (x never written): halos valid from the start */
  PAR_LOOP(kew, "ew", edges, op_arg_dat(x, 0, pedge, 2, "double", OP_READ),
           op_arg_dat(x, 1, pedge, 2, "double", OP_READ), op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
  double *wall = (double *)malloc(sizeof(double) * (size_t)g.nedge);
  op_fetch_data_idx(w, wall, 0, g.nedge - 1);
  for (e = 0; e < g.nedge; e++)
    CHECK_DBL(wall[e], g.x[2 * g.enode[2 * e]] + 1000.0 * g.x[2 * g.enode[2 * e + 1] + 1]);

  /* cx2 (declared after op_partition) read through pecell: its halo rows came with it */
  PAR_LOOP(kew, "ew", edges, op_arg_dat(cx2, 0, pecell, 2, "double", OP_READ),
           op_arg_dat(cx2, 1, pecell, 2, "double", OP_READ), op_arg_dat(w2, -1, OP_ID, 1, "double", OP_WRITE));
  {
    double *w2all = (double *)malloc(sizeof(double) * (size_t)g.nedge);
    op_fetch_data_idx(w2, w2all, 0, g.nedge - 1);
    for (e = 0; e < g.nedge; e++)
      CHECK_DBL(w2all[e], g.cx[2 * g.ecell[2 * e]] + 1000.0 * g.cx[2 * g.ecell[2 * e + 1] + 1]);
    free(w2all);
  }

  /* exec-halo direct args + iteration count: w (dirty, direct READ) in an indirect INC loop */
  int count = 7;
  PAR_LOOP(kres, "res", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(r, 0, pecell, 1, "double", OP_INC), op_arg_dat(r, 1, pecell, 1, "double", OP_INC),
           op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_INT(count, 7 + g.nedge);
  double *want = (double *)calloc(2 * (size_t)g.ncell + 2, sizeof(double));
  for (e = 0; e < g.nedge; e++) {
    want[g.ecell[2 * e]] += wall[e];
    want[g.ecell[2 * e + 1]] += 2.0 * wall[e];
  }
  double *rb = (double *)malloc(sizeof(double) * (size_t)(nc + 1));
  op_fetch_data(r, rb);
  for (i = 0; i < nc; i++) CHECK_DBL(rb[i], want[c0 + i]);
  free(rb);

  /* non-exec halo reads: q written (dirty), then read through pecell by an INC loop to nodes */
  PAR_LOOP(kq, "qset", cells, op_arg_idx(-1, OP_ID), op_arg_dat(q, -1, OP_ID, 1, "double", OP_WRITE));
  PAR_LOOP(knacc, "nacc", edges, op_arg_dat(q, 0, pecell, 1, "double", OP_READ),
           op_arg_dat(q, 1, pecell, 1, "double", OP_READ), op_arg_dat(na, 0, pedge, 2, "double", OP_INC),
           op_arg_dat(na, 1, pedge, 2, "double", OP_INC));
  double *nw = (double *)calloc(2 * (size_t)g.nnode, sizeof(double));
  for (e = 0; e < g.nedge; e++) {
    double qa = 0.5 * g.ecell[2 * e] + 1.0, qb = 0.5 * g.ecell[2 * e + 1] + 1.0;
    nw[2 * g.enode[2 * e]] += qa;
    nw[2 * g.enode[2 * e] + 1] += qb;
    nw[2 * g.enode[2 * e + 1]] += qa;
    nw[2 * g.enode[2 * e + 1] + 1] += qb;
  }
  double *nb = (double *)malloc(sizeof(double) * 2 * (size_t)g.nnode);
  op_fetch_data_idx(na, nb, 0, g.nnode - 1);
  for (i = 0; i < 2 * g.nnode; i++) CHECK_DBL(nb[i], nw[i]);

  /* reductions: INC from a non-zero start, MAX with its payload, MIN */
  int cnt = 5, mx = -1, info = -7;
  double mn = 1e9;
  PAR_LOOP(kred, "red", cells, op_arg_idx(-1, OP_ID), op_arg_gbl(&cnt, 1, "int", OP_INC),
           op_arg_gbl(&mx, 1, "int", OP_MAX), op_arg_info(&info, 1, "int", 2), op_arg_gbl(&mn, 1, "double", OP_MIN));
  CHECK_INT(cnt, 5 + g.ncell);
  CHECK_INT(mx, g.ncell - 1);
  CHECK_INT(info, 2 * (g.ncell - 1));
  CHECK_DBL(mn, 0.0);

  /* op_fetch_data_idx of sub-ranges (crossing the declared blocks), single elements */
  {
    int lo = g.ncell / 3, hi = (2 * g.ncell) / 3 + 1;
    int *got = (int *)malloc(sizeof(int) * (size_t)g.ncell);
    op_fetch_data_idx(cid, got, lo, hi);
    for (i = lo; i <= hi; i++) CHECK_INT(got[i - lo], i);
    op_fetch_data_idx(cid, got, g.ncell - 1, g.ncell - 1);
    CHECK_INT(got[0], g.ncell - 1);
    op_fetch_data_idx(cid, got, 0, 0);
    CHECK_INT(got[0], 0);
    free(got);
    double *bg = (double *)malloc(sizeof(double) * BIG_DIM * 7);
    op_fetch_data_idx(big, bg, BIG_N / 2 - 3, BIG_N / 2 + 3);
    for (i = 0; i < 7 * BIG_DIM; i++) CHECK_DBL(bg[i], (double)(BIG_N / 2 - 3) * BIG_DIM + i + 0.25);
    free(bg);
  }

  /* streamed file output, whole files: text of na (its values fetched above), binary of big */
  op_print_dat_to_txtfile(na, "t800-na.txt");
  op_print_dat_to_binfile(big, "t800-big.bin");
  CHECK_OK();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    size_t cap = 64 + (size_t)g.nnode * 64, at;
    char *want_t = (char *)malloc(cap);
    at = (size_t)snprintf(want_t, cap, "%d 2\n", g.nnode);
    for (i = 0; i < g.nnode; i++) at += (size_t)snprintf(want_t + at, cap - at, " %+2.15lE %+2.15lE\n", nb[2 * i], nb[2 * i + 1]);
    char *t = test_read_file("t800-na.txt");
    CHECK(t != NULL && strcmp(t, want_t) == 0);
    free(t);
    free(want_t);
    remove("t800-na.txt");
    FILE *f = fopen("t800-big.bin", "rb");
    CHECK(f != NULL);
    int head[2] = {0, 0};
    CHECK(fread(head, sizeof(int), 2, f) == 2);
    CHECK_INT(head[0], BIG_N);
    CHECK_INT(head[1], BIG_DIM);
    double *all = (double *)malloc(sizeof(double) * BIG_DIM * (size_t)BIG_N);
    CHECK(fread(all, sizeof(double), (size_t)BIG_N * BIG_DIM, f) == (size_t)BIG_N * BIG_DIM);
    CHECK(fgetc(f) == EOF);
    fclose(f);
    for (i = 0; i < BIG_N * BIG_DIM; i++)
      if (all[i] != (double)i + 0.25) {
        fprintf(stderr, "t800-big.bin: value %d is %g\n", i, all[i]);
        CHECK(0);
      }
    free(all);
    remove("t800-big.bin");
  }

  /* collective text output from rank 0, original order */
  op_print_dat_to_txtfile(cid, "t800-cid.txt");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char *t = test_read_file("t800-cid.txt");
    char head[64];
    snprintf(head, sizeof head, "%d 1\n +0\n +1\n", g.ncell);
    CHECK(strncmp(t, head, strlen(head)) == 0);
    free(t);
    remove("t800-cid.txt");
  }
  free(wall);
  free(want);
  free(nw);
  free(nb);
  op_exit();
  grid_free(&g);
  return 0;
}

int main(int argc, char **argv)
{
  int nx = 12, ny = 7, init = 0;
  if (argc < 2) return 2;
  if (argc >= 4) {
    nx = atoi(argv[2]);
    ny = atoi(argv[3]);
  }
  MPI_Init(&argc, &argv);
  run(argv[1], "BLOCK", NULL, nx, ny);
  run(argv[1], "RCB", NULL, nx, ny);
  run(argv[1], "METIS", "KWAY", nx, ny);
  run(argv[1], "PARMETIS", "KWAY", nx, ny);
  run(argv[1], "RANDOM", NULL, nx, ny);
  run(argv[1], "PTSCOTCH", "GEOM", nx, ny);
  MPI_Initialized(&init);
  CHECK(init); /* op_exit left the program's MPI alone */
  MPI_Finalize();
  return 0;
}
