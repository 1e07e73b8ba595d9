/* Dirty tracking and grouped exchanges, counted through op_timing_output's MPI summary line
 * ("E exchanges, M messages on process 0"): data read after declaration needs no exchange; a
 * READ-only loop exchanges once after a write and never again; OP_INC loops exchange nothing;
 * two dirty dats read by one loop travel in one message per neighbour, and both arrive right.
 * mpi-backends: seq threads check opencl
 * mpi-n: 2 3 4 */
#include "test.h"
#include "grid.h"
#include <mpi.h>

static const char *k_rx = "void rx(const double *a, const double *b, double *w) { *w = a[0] + b[1]; }\n";
static const char *k_q = "void qset(const int *i, const int *s, double *q) { *q = *i + *s; }\n";
static const char *k_rq = "void rq(const double *a, const double *b, double *w) { *w = *a - *b; }\n";
static const char *k_inc = "void inc(const double *w, double *a, double *b) { *a += *w; *b += *w; }\n";
static const char *k_both =
    "void both(const double *q0, const double *n0, const double *n1, double *w) { *w = *q0 + 10.0 * *n0 + 100.0 * *n1; }\n";

static long long exchanges, messages;
static void timing(void) { op_timing_output(); }
static void counts(int rank)
{
  char *t = test_stdout_of(timing);
  if (rank == 0) {
    const char *at = strstr(t, "exchanges, ");
    CHECK(at != NULL);
    while (at > t && at[-1] != ';') at--;
    CHECK(sscanf(at, " %lld exchanges, %lld messages", &exchanges, &messages) == 2);
  }
  free(t);
}

int main(int argc, char **argv)
{
  grid g;
  int rank, p, e, i, step = 3;
  MPI_Init(&argc, &argv);
  test_init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  grid_make(&g, 10, 8);
  int c0 = block_lo(g.ncell, rank, p), n0 = block_lo(g.nnode, rank, p), e0 = block_lo(g.nedge, rank, p);
  op_set cells = op_decl_set(block_n(g.ncell, rank, p), "cells");
  op_set nodes = op_decl_set(block_n(g.nnode, rank, p), "nodes");
  op_set edges = op_decl_set(block_n(g.nedge, rank, p), "edges");
  op_map pecell = op_decl_map(edges, cells, 2, g.ecell + 2 * e0, "pecell");
  op_map pedge = op_decl_map(edges, nodes, 2, g.enode + 2 * e0, "pedge");
  op_dat x = op_decl_dat(nodes, 2, "double", g.x + 2 * n0, "x");
  op_dat q = op_decl_dat(cells, 1, "double", NULL, "q");
  op_dat na = op_decl_dat(nodes, 1, "double", NULL, "na");
  op_dat w = op_decl_dat(edges, 1, "double", NULL, "w");
  (void)c0;
  op_partition("BLOCK", NULL, cells, OP_ID, NULL);
  op_kernel krx = op_decl_kernel(k_rx, "rx"), kq = op_decl_kernel(k_q, "qset"), krq = op_decl_kernel(k_rq, "rq");
  op_kernel kinc = op_decl_kernel(k_inc, "inc"), kboth = op_decl_kernel(k_both, "both");
  long long ex0, msg0;

  /* read after declaration: no exchange */
  PAR_LOOP(krx, "rx", edges, op_arg_dat(x, 0, pedge, 2, "double", OP_READ),
           op_arg_dat(x, 1, pedge, 2, "double", OP_READ), op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
  counts(rank);
  if (rank == 0) CHECK_U64(exchanges, 0);

  /* a write, then three READ-only loops: one exchange */
  PAR_LOOP(kq, "qset", cells, op_arg_idx(-1, OP_ID), op_arg_gbl(&step, 1, "int", OP_READ),
           op_arg_dat(q, -1, OP_ID, 1, "double", OP_WRITE));
  for (i = 0; i < 3; i++)
    PAR_LOOP(krq, "rq", edges, op_arg_dat(q, 0, pecell, 1, "double", OP_READ),
             op_arg_dat(q, 1, pecell, 1, "double", OP_READ), op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
  counts(rank);
  if (rank == 0) {
    CHECK_U64(exchanges, 1);
    CHECK(messages >= 1);
  }
  ex0 = exchanges;
  msg0 = messages;

  /* OP_INC through the halo: no exchange (w is dirty but read directly, and the loop's exec
   * halo needs it: that is one exchange of w) */
  PAR_LOOP(kinc, "inc", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(na, 0, pedge, 1, "double", OP_INC), op_arg_dat(na, 1, pedge, 1, "double", OP_INC));
  PAR_LOOP(kinc, "inc", edges, op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(na, 0, pedge, 1, "double", OP_INC), op_arg_dat(na, 1, pedge, 1, "double", OP_INC));
  counts(rank);
  if (rank == 0) CHECK_U64(exchanges, ex0 + 1);
  ex0 = exchanges;
  msg0 = messages;

  /* q and na both dirty, read by one loop: one exchange, one message per neighbour */
  step = 5;
  PAR_LOOP(kq, "qset", cells, op_arg_idx(-1, OP_ID), op_arg_gbl(&step, 1, "int", OP_READ),
           op_arg_dat(q, -1, OP_ID, 1, "double", OP_WRITE));
  PAR_LOOP(kboth, "both", edges, op_arg_dat(q, 0, pecell, 1, "double", OP_READ),
           op_arg_dat(na, 0, pedge, 1, "double", OP_READ), op_arg_dat(na, 1, pedge, 1, "double", OP_READ),
           op_arg_dat(w, -1, OP_ID, 1, "double", OP_WRITE));
  counts(rank);
  if (rank == 0) {
    CHECK_U64(exchanges, ex0 + 1);
    CHECK(messages - msg0 >= 1 && messages - msg0 <= p - 1);
    if (p == 2) CHECK_U64(messages - msg0, 1);
  }
  /* values: w = q[c0] + 10 na[n0] + 100 na[n1], na = 2 * sum over edges at the node of
   * (x-based w of the first loop minus ...): computed here from the same formulas */
  {
    double *wq = (double *)malloc(sizeof(double) * (size_t)g.nedge), *nav = (double *)calloc((size_t)g.nnode, sizeof(double));
    double *got = (double *)malloc(sizeof(double) * (size_t)g.nedge);
    for (e = 0; e < g.nedge; e++) wq[e] = (g.ecell[2 * e] + 3.0) - (g.ecell[2 * e + 1] + 3.0);
    for (e = 0; e < g.nedge; e++) {
      nav[g.enode[2 * e]] += 2.0 * wq[e];
      nav[g.enode[2 * e + 1]] += 2.0 * wq[e];
    }
    op_fetch_data_idx(w, got, 0, g.nedge - 1);
    for (e = 0; e < g.nedge; e++)
      CHECK_DBL(got[e], (g.ecell[2 * e] + 5.0) + 10.0 * nav[g.enode[2 * e]] + 100.0 * nav[g.enode[2 * e + 1]]);
    free(wq);
    free(nav);
    free(got);
  }
  op_exit();
  grid_free(&g);
  MPI_Finalize();
  return 0;
}
