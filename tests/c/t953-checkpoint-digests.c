/* A restart with the same declarations but other values is refused (issue 37, point 4): the
 * checkpoint records a SHA-256 digest of each map's values and of each dat's values as the run
 * started from them (declared order), and the restart compares them at the restore point.
 * Session 1 writes a checkpoint after step 2 of 5 (a loop reading a dat through a map and
 * incrementing another). Then, each from that checkpoint:
 *  - one map entry other: OP2_ERR_CHECKPOINT at the restore (step 3) naming the map, and every
 *    later loop is refused too (before, the run resumed silently with results that match
 *    neither run);
 *  - the dat read through the map declared with one other value: refused naming that dat;
 *  - the same values with the map's target set renumbered (op_renumber: other storage, the
 *    same values in declared order): resumes, and ends with session 1's values;
 *  - the same program: resumes, and ends with session 1's values. */
#include "test.h"

#include <unistd.h>

#define NC 50
#define NN 51
#define STEPS 5

static const char *src = "void step(const double *a, const double *b, double *d, double *s) {\n"
                         "  *d += *a + 2.0 * *b; *s += *d;\n"
                         "}\n";

/* One session; `bad_map`/`bad_x`: change one value; `renumber`: op_renumber the map first.
 * Returns the number of loops that failed; `final` gets the dat at the end (session 1's
 * check), `sums` each step's global. */
static int session(const char *backend, const char *path, int bad_map, int bad_x, int renumber, double *final,
                   double *sums)
{
  char prog[] = "t953", tok[64];
  int m[2 * NC], i, failed = 0;
  double x[NN];
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  test_init_tokens(prog, tok, (const char *)NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  for (i = 0; i < NC; i++) {
    m[2 * i] = i;
    m[2 * i + 1] = (i * 7 + 3) % NN;
  }
  for (i = 0; i < NN; i++) x[i] = 0.5 * i + 1.0;
  if (bad_map) m[2 * 17 + 1] = (m[2 * 17 + 1] + 1) % NN;
  if (bad_x) x[40] += 1.0;
  op_set cells = op_decl_set(NC, "cells");
  op_set nodes = op_decl_set(NN, "nodes");
  op_map pm = op_decl_map(cells, nodes, 2, m, "cell_nodes");
  op_dat px = op_decl_dat(nodes, 1, "double", x, "x");
  op_dat pd = op_decl_dat(cells, 1, "double", NULL, "d");
  op_kernel k = op_decl_kernel(src, "step");
  CHECK_OK();
  if (renumber) {
    op_renumber(pm);
    CHECK_OK();
  }
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 1);
  for (i = 0; i < STEPS; i++) {
    sums[i] = 0.0;
    PAR_LOOP(k, "step", cells, op_arg_dat(px, 0, pm, 1, "double", OP_READ), op_arg_dat(px, 1, pm, 1, "double", OP_READ),
             op_arg_dat(pd, -1, OP_ID, 1, "double", OP_INC), op_arg_gbl(&sums[i], 1, "double", OP_INC));
    if (op_last_error_code() != 0) {
      failed++;
      if (i == 3) CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", path, "of other data");
      if (i == 3 && bad_map) CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", "map 'cell_nodes' has other values");
      if (i == 3 && bad_x) CHECK_ERR(OP2_ERR_CHECKPOINT, "op_par_loop 'step'", "dat 'x' was declared with other values");
    }
    if (i == 2) op_checkpoint_now();
  }
  op_set_error_handler(OP_ERRORS_ABORT);
  op_fetch_data(pd, final);
  op_exit();
  return failed;
}

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t953-XXXXXX", path[256];
  double a[NC], b[NC], sa[STEPS], sb[STEPS];
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/run.ck", dir);
  {
    /* without HDF5 there are no checkpoints */
    test_init(argc, argv);
    op_set_error_handler(OP_ERRORS_RETURN);
    int on = op_checkpointing_init(path, 1e9, 0);
    int unavailable = !on && op_last_error_code() == OP2_ERR_BACKEND_UNAVAILABLE;
    op_exit();
    if (unavailable) {
      rmdir(dir);
      return 0;
    }
  }
  CHECK_INT(session(argv[1], path, 0, 0, 0, a, sa), 0);
  CHECK(access(path, R_OK) == 0);

  CHECK_INT(session(argv[1], path, 1, 0, 0, b, sb), 2); /* steps 3 and 4 refused */
  CHECK_INT(session(argv[1], path, 0, 1, 0, b, sb), 2);

  CHECK_INT(session(argv[1], path, 0, 0, 1, b, sb), 0);
  for (i = 0; i < NC; i++) CHECK_NEAR(b[i], a[i], 1e-12 * fabs(a[i]));
  for (i = 0; i < STEPS; i++) CHECK_NEAR(sb[i], sa[i], 1e-12 * fabs(sa[i]));

  CHECK_INT(session(argv[1], path, 0, 0, 0, b, sb), 0);
  for (i = 0; i < NC; i++) CHECK_DBL(b[i], a[i]);
  for (i = 0; i < STEPS; i++) CHECK_DBL(sb[i], sa[i]);

  unlink(path);
  rmdir(dir);
  return 0;
}
