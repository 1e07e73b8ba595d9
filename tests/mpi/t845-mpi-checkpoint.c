/* Checkpoint and restart under MPI (issue 37, point 4): the digests of the maps' and dats'
 * values are of the global values in declared order, whatever the split into processes'
 * blocks. Session 1 (each process declares an even block, op_partition METIS) writes a
 * checkpoint after step 2 of 5. Then, from that checkpoint, on the same process count:
 *  - one map entry other (in the last process's block): OP2_ERR_CHECKPOINT at the restore
 *    (step 3) on every process, naming the map (before, the run resumed silently);
 *  - one value of the dat read through the map other: refused naming that dat;
 *  - the same values declared in other blocks (process 0 a quarter): resumes, and ends with
 *    session 1's values (to rounding: another partition sums in another order);
 *  - the same program: resumes, and ends with session 1's values exactly.
 * mpi-backends: seq threads
 * mpi-n: 2 3 */
#include "test.h"
#include <mpi.h>
#include <unistd.h>

#define NC 300
#define NN 301
#define STEPS 5

static const char *src = "void step(const double *a, const double *b, double *d, double *s) {\n"
                         "  *d += *a + 2.0 * *b; *s += *d;\n"
                         "}\n";

static char path[64];

/* This process's block [lo, hi) of n elements: an even split, or (`skew`) process 0 a quarter. */
static void block(int n, int skew, int *lo, int *hi)
{
  int r = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (!skew) {
    *lo = (int)((long long)n * r / p);
    *hi = (int)((long long)n * (r + 1) / p);
    return;
  }
  int first = n / 4;
  *lo = r == 0 ? 0 : first + (int)((long long)(n - first) * (r - 1) / (p - 1));
  *hi = r == 0 ? first : first + (int)((long long)(n - first) * r / (p - 1));
}

/* One session; returns the number of loops refused. `final`: the dat's declared block at the
 * end; `sums`: each step's global. */
static int session(const char *backend, int bad_map, int bad_x, int skew, double *final, double *sums)
{
  char prog[] = "t845", tok[64];
  static int m[2 * NC];
  static double x[NN];
  int i, failed = 0, clo, chi, nlo, nhi;
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, tok, (const char *)NULL);
  for (i = 0; i < NC; i++) {
    m[2 * i] = i;
    m[2 * i + 1] = (i * 7 + 3) % NN;
  }
  for (i = 0; i < NN; i++) x[i] = 0.5 * i + 1.0;
  if (bad_map) m[2 * (NC - 5) + 1] = (m[2 * (NC - 5) + 1] + 1) % NN;
  if (bad_x) x[NN - 3] += 1.0;
  block(NC, skew, &clo, &chi);
  block(NN, skew, &nlo, &nhi);
  op_set cells = op_decl_set(chi - clo, "cells");
  op_set nodes = op_decl_set(nhi - nlo, "nodes");
  op_map pm = op_decl_map(cells, nodes, 2, m + 2 * clo, "cell_nodes");
  op_dat px = op_decl_dat(nodes, 1, "double", x + nlo, "x");
  op_dat pd = op_decl_dat(cells, 1, "double", NULL, "d");
  op_kernel k = op_decl_kernel(src, "step");
  op_partition("METIS", "KWAY", cells, pm, NULL);
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 1);
  op_set_error_handler(OP_ERRORS_RETURN);
  for (i = 0; i < STEPS; i++) {
    sums[i] = 0.0;
    PAR_LOOP(k, "step", cells, op_arg_dat(px, 0, pm, 1, "double", OP_READ), op_arg_dat(px, 1, pm, 1, "double", OP_READ),
             op_arg_dat(pd, -1, OP_ID, 1, "double", OP_INC), op_arg_gbl(&sums[i], 1, "double", OP_INC));
    if (op_last_error_code() != 0) {
      failed++;
      CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", path, "of other data");
      if (bad_map) CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", "map 'cell_nodes' has other values");
      if (bad_x) CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", "dat 'x' was declared with other values");
    }
    if (i == 2) op_checkpoint_now();
  }
  op_set_error_handler(OP_ERRORS_ABORT);
  op_fetch_data(pd, final + clo); /* this process's declared block */
  op_exit();
  return failed;
}

int main(int argc, char **argv)
{
  static double a[NC], b[NC]; /* zero outside what is fetched */
  double sa[STEPS], sb[STEPS];
  int i, p, rank;
  if (argc < 2) return 2;
  /* MPI first, for the file name (op_init keeps a running MPI) */
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  snprintf(path, sizeof path, "t845-np%d.ck", p);
  if (rank == 0) unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);

  CHECK_INT(session(argv[1], 0, 0, 0, a, sa), 0);
  MPI_Allreduce(MPI_IN_PLACE, a, NC, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* the whole dat */
  CHECK_INT(session(argv[1], 1, 0, 0, b, sb), 2); /* steps 3 and 4 refused, on every process */
  CHECK_INT(session(argv[1], 0, 1, 0, b, sb), 2);

  for (i = 0; i < NC; i++) b[i] = 0.0;
  CHECK_INT(session(argv[1], 0, 0, 1, b, sb), 0);
  {
    int lo, hi;
    block(NC, 1, &lo, &hi);
    for (i = lo; i < hi; i++) CHECK_NEAR(b[i], a[i], 1e-12 * fabs(a[i]));
  }
  for (i = 0; i < STEPS; i++) CHECK_NEAR(sb[i], sa[i], 1e-12 * fabs(sa[i]));

  CHECK_INT(session(argv[1], 0, 0, 0, b, sb), 0);
  {
    int lo, hi;
    block(NC, 0, &lo, &hi);
    for (i = lo; i < hi; i++) CHECK_DBL(b[i], a[i]);
  }
  for (i = 0; i < STEPS; i++) CHECK_DBL(sb[i], sa[i]);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) unlink(path);
  MPI_Finalize();
  return 0;
}
