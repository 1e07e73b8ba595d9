/* Partitions with nothing in them: a set of 2 elements over up to 4 processes (some declare
 * none), METIS and PT-Scotch (distributed, processes without vertices) asked for more parts than
 * vertices, an empty set: loops, exchanges and
 * reductions still work on every process (identity values where a process has nothing), and
 * nothing hangs.
 * mpi-backends: seq threads check opencl
 * mpi-n: 1 3 4 */
#include "test.h"
#include <mpi.h>

static const char *k_red =
    "void red(const double *v, double *s, double *mn, double *mx, int *n) {\n"
    "  *s += *v; if (*v < *mn) *mn = *v; if (*v > *mx) *mx = *v; *n += 1; }\n";
static const char *k_inc = "void inc(const double *v, double *a, double *b) { *a += *v; *b += *v; }\n";
static const char *k_set = "void vset(const int *i, double *v) { *v = 3.0 + *i; }\n";

static void run(const char *lib, const char *routine)
{
  int rank, p, i;
  op_rank(&rank);
  p = op_num_ranks();
  /* 2 pairs and 3 points, declared by the first processes only; an empty set everywhere */
  int npair = rank < 2 ? 1 : 0, npt = rank < 3 ? 1 : 0;
  if (p == 1) npair = 2, npt = 3;
  int pairs_all[4] = {0, 1, 1, 2};
  int *pm = pairs_all + 2 * (p == 1 ? 0 : rank);
  op_set pairs = op_decl_set(npair, "pairs");
  op_set pts = op_decl_set(npt, "pts");
  op_set none = op_decl_set(0, "none");
  op_map pp = op_decl_map(pairs, pts, 2, pm, "pp");
  op_dat v = op_decl_dat(pairs, 1, "double", NULL, "v");
  op_dat acc = op_decl_dat(pts, 1, "double", NULL, "acc");
  op_dat e = op_decl_dat(none, 1, "double", NULL, "e");
  op_partition(lib, routine, pairs, pp, NULL);
  CHECK_OK();
  CHECK_INT((int)op_get_size(pairs), 2);
  CHECK_INT((int)op_get_size(none), 0);
  op_kernel kset = op_decl_kernel(k_set, "vset"), kred = op_decl_kernel(k_red, "red"), kinc = op_decl_kernel(k_inc, "inc");
  PAR_LOOP(kset, "vset", pairs, op_arg_idx(-1, OP_ID), op_arg_dat(v, -1, OP_ID, 1, "double", OP_WRITE));
  double s = 1.0, mn = 1e300, mx = -1e300;
  int n = 0;
  PAR_LOOP(kred, "red", pairs, op_arg_dat(v, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC),
           op_arg_gbl(&mn, 1, "double", OP_MIN), op_arg_gbl(&mx, 1, "double", OP_MAX), op_arg_gbl(&n, 1, "int", OP_INC));
  CHECK_DBL(s, 1.0 + 3.0 + 4.0);
  CHECK_DBL(mn, 3.0);
  CHECK_DBL(mx, 4.0);
  CHECK_INT(n, 2);
  /* over the empty set: identities stay */
  s = 2.0, mn = 1e300, mx = -1e300, n = 0;
  PAR_LOOP(kred, "red", none, op_arg_dat(e, -1, OP_ID, 1, "double", OP_READ), op_arg_gbl(&s, 1, "double", OP_INC),
           op_arg_gbl(&mn, 1, "double", OP_MIN), op_arg_gbl(&mx, 1, "double", OP_MAX), op_arg_gbl(&n, 1, "int", OP_INC));
  CHECK_DBL(s, 2.0);
  CHECK_DBL(mn, 1e300);
  CHECK_DBL(mx, -1e300);
  CHECK_INT(n, 0);
  /* indirect INC through the halo: pts 0,1,2 get 3, 3+4, 4 */
  for (i = 0; i < 2; i++)
    PAR_LOOP(kinc, "inc", pairs, op_arg_dat(v, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(acc, 0, pp, 1, "double", OP_INC), op_arg_dat(acc, 1, pp, 1, "double", OP_INC));
  double all[3];
  op_fetch_data_idx(acc, all, 0, 2);
  CHECK_DBL(all[0], 6.0);
  CHECK_DBL(all[1], 14.0);
  CHECK_DBL(all[2], 8.0);
  double mine[4] = {-1, -1, -1, -1};
  op_fetch_data(acc, mine);
  if (npt) CHECK_DBL(mine[0], all[p == 1 ? 0 : rank]);
  CHECK(mine[npt] == -1.0);
}

/* A chain of 40 points and 39 segments declared on process 0 only: PT-Scotch (which can hang
 * when a process has no vertices) is given the graph spread evenly; every point's degree comes
 * out right on every process count. */
static void run_uneven(const char *lib)
{
  enum { NPT = 40 };
  int rank, i, seg[2 * (NPT - 1)];
  op_rank(&rank);
  for (i = 0; i < NPT - 1; i++) seg[2 * i] = i, seg[2 * i + 1] = i + 1;
  op_set segs = op_decl_set(rank == 0 ? NPT - 1 : 0, "segs");
  op_set pts = op_decl_set(rank == 0 ? NPT : 0, "pts");
  op_map sp = op_decl_map(segs, pts, 2, seg, "sp");
  op_dat deg = op_decl_dat(pts, 1, "double", NULL, "deg");
  op_partition(lib, "KWAY", segs, sp, NULL);
  CHECK_OK();
  op_kernel k = op_decl_kernel("void two(double *a, double *b) { *a += 1.0; *b += 1.0; }\n", "two");
  PAR_LOOP(k, "two", segs, op_arg_dat(deg, 0, sp, 1, "double", OP_INC), op_arg_dat(deg, 1, sp, 1, "double", OP_INC));
  double all[NPT];
  op_fetch_data_idx(deg, all, 0, NPT - 1);
  for (i = 0; i < NPT; i++) CHECK_DBL(all[i], (i == 0 || i == NPT - 1) ? 1.0 : 2.0);
}

int main(int argc, char **argv)
{
  const char *libs[][2] = {{"METIS", "KWAY"}, {"BLOCK", NULL}, {"RANDOM", NULL}, {"PTSCOTCH", "KWAY"}};
  int i, init = 0;
  MPI_Init(&argc, &argv);
  for (i = 0; i < 4; i++) {
    test_init(argc, argv);
    run(libs[i][0], libs[i][1]);
    op_exit();
  }
  test_init(argc, argv);
  run_uneven("PTSCOTCH");
  op_exit();
  MPI_Initialized(&init);
  CHECK(init);
  MPI_Finalize();
  return 0;
}
