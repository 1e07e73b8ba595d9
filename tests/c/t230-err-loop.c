/* Loop errors reported by op_par_loop: NULLs, malformed argument lists, maps (or direct dats)
 * that do not start from the loop's set, op_arg_info refs that are not MIN/MAX globals, args
 * from failed op_arg_* calls. A failed loop changes neither dats nor the caller's globals. */
#include "test.h"

static const char *src_k2 = "void k2(double *a, double *b) { *a += 1.0; *b += 1.0; }\n";

static const char *src_info =
    "void kinfo(const double *v, double *g, int *loc, const int *idx)\n"
    "{ if (*v > *g) { *g = *v; *loc = *idx; } }\n";

/* Every value of d is still `want`, and the caller's globals are unchanged. */
static void check_unchanged(const char *file, int line, op_dat d, int n, double want)
{
  double buf[16];
  int i;
  op_fetch_data(d, buf);
  for (i = 0; i < n; i++)
    if (buf[i] != want) test_fail_(file, line, "dat changed by a failed loop: [%d] = %g", i, buf[i]);
}
#define CHECK_UNCHANGED(d, n, want) check_unchanged(__FILE__, __LINE__, d, n, want)

int main(int argc, char **argv)
{
  op_set nodes, edges, cells;
  op_map pedge, pecell;
  op_dat x, ev, q;
  op_kernel k2, kinfo;
  int e2n[6] = {0, 1, 1, 2, 2, 0}, c2n[4] = {0, 1, 1, 2};
  double xv[3] = {5, 5, 5}, evv[3] = {5, 5, 5}, g, gr;
  int loc;
  op_arg a[4];

  test_init(argc, argv);
  nodes = op_decl_set(3, "nodes");
  edges = op_decl_set(3, "edges");
  cells = op_decl_set(2, "cells");
  pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
  pecell = op_decl_map(cells, nodes, 2, c2n, "pcell");
  x = op_decl_dat(nodes, 1, "double", xv, "x");
  ev = op_decl_dat(edges, 1, "double", evv, "ev");
  q = op_decl_dat(cells, 1, "double", NULL, "q");
  k2 = op_decl_kernel(src_k2, "k2");
  kinfo = op_decl_kernel(src_info, "kinfo");
  op_set_error_handler(OP_ERRORS_RETURN);

  a[0] = op_arg_dat(ev, -1, OP_ID, 1, "double", OP_RW);
  a[1] = op_arg_dat(x, 0, pedge, 1, "double", OP_INC);
  CHECK_OK();

  /* NULLs and malformed lists. */
  op_par_loop(NULL, "loop", edges, 2, a);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_par_loop", "kernel", "is NULL");
  op_par_loop(k2, "loop", NULL, 2, a);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_par_loop", "set", "is NULL");
  op_par_loop(k2, NULL, edges, 2, a);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_par_loop", "name", "is NULL");
  op_par_loop(k2, "loop", edges, -1, a);
  CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop", "'loop'", "-1");
  op_par_loop(k2, "loop", edges, 2, NULL);
  CHECK_ERR(OP2_ERR_BAD_LOOP, "op_par_loop", "'loop'");
  CHECK_UNCHANGED(ev, 3, 5.0);
  CHECK_UNCHANGED(x, 3, 5.0);

  /* A map from cells used in a loop over edges; a dat on nodes accessed directly over edges. */
  a[1] = op_arg_dat(x, 0, pecell, 1, "double", OP_INC);
  CHECK_OK();
  op_par_loop(k2, "wrongset", edges, 2, a);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop", "'wrongset'", "'x'", "'pcell'", "'cells'", "'edges'");
  a[1] = op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW);
  op_par_loop(k2, "direct_wrongset", edges, 2, a);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop", "'direct_wrongset'", "'x'", "'nodes'", "'edges'");
  a[1] = op_arg_idx(1, pecell);
  {
    op_kernel ki = op_decl_kernel("void ki(double *a, const int *i) { *a += *i; }\n", "ki");
    op_par_loop(ki, "idx_wrongset", edges, 2, a);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop", "'idx_wrongset'", "'pcell'", "'cells'", "'edges'");
  }
  CHECK_UNCHANGED(ev, 3, 5.0);
  CHECK_UNCHANGED(x, 3, 5.0);
  (void)q;

  /* op_arg_info refs: to a dat arg, a READ global, an INC global, itself, out of range. */
  {
    op_kernel kg = op_decl_kernel(
        "void kg(const double *v, double *g, int *loc, const int *idx) { *g += *v; *loc = *idx; }\n",
        "kg");
    g = 100.0;
    loc = -7;
    a[0] = op_arg_dat(ev, -1, OP_ID, 1, "double", OP_READ);
    a[1] = op_arg_gbl(&g, 1, "double", OP_INC);
    a[2] = op_arg_info(&loc, 1, "int", 0); /* the dat */
    a[3] = op_arg_idx(-1, OP_ID);
    CHECK_OK();
    op_par_loop(kg, "info_dat", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_dat'");
    a[2] = op_arg_info(&loc, 1, "int", 1); /* an INC global */
    op_par_loop(kg, "info_inc", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_inc'");
    a[1] = op_arg_gbl(&g, 1, "double", OP_READ);
    op_par_loop(kg, "info_read", edges, 4, a); /* a READ global */
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_read'");
    a[1] = op_arg_gbl(&g, 1, "double", OP_MAX);
    a[2] = op_arg_info(&loc, 1, "int", 2); /* itself */
    op_par_loop(kg, "info_self", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_self'");
    a[2] = op_arg_info(&loc, 1, "int", 3); /* the op_arg_idx */
    op_par_loop(kg, "info_idx", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_idx'");
    a[2] = op_arg_info(&loc, 1, "int", 4); /* past the end */
    op_par_loop(kg, "info_past", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_past'", "4");
    a[2] = op_arg_info(&loc, 1, "int", -1);
    op_par_loop(kg, "info_neg", edges, 4, a);
    CHECK_ERR(OP2_ERR_ARG_INFO, "op_par_loop", "'info_neg'", "-1");
    CHECK_DBL(g, 100.0);
    CHECK_INT(loc, -7);
    CHECK_UNCHANGED(ev, 3, 5.0);

    /* The right ref works (ev is 5 everywhere, above the caller's 1: any edge may win). */
    g = 1.0;
    a[2] = op_arg_info(&loc, 1, "int", 1);
    op_par_loop(kinfo, "info_ok", edges, 4, a);
    CHECK_OK();
    CHECK_DBL(g, 5.0);
    CHECK(loc >= 0 && loc < 3);
  }

  /* An op_arg from a failed op_arg_* call (the loop reports that call's real cause), and a
   * zeroed one, used in a loop. */
  g = 10.5;
  gr = 2.0;
  a[0] = op_arg_dat(ev, -1, OP_ID, 1, "double", OP_RW);
  a[1] = op_arg_dat(x, 0, pedge, 3, "double", OP_INC); /* dim 3 disagrees with x's dim 1 */
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_dat", "'x'");
  a[2] = op_arg_gbl(&g, 1, "double", OP_INC);
  op_par_loop(k2, "invalid_arg", edges, 3, a);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_par_loop 'invalid_arg', arg 1: op_arg_dat 'x'", "dim 3 disagrees");
  memset(&a[1], 0, sizeof a[1]);
  op_par_loop(k2, "zero_arg", edges, 3, a);
  CHECK_ERR(OP2_ERR_ARG_INVALID, "op_par_loop", "'zero_arg'");
  a[1] = op_arg_gbl(&gr, 1, "dbl", OP_READ); /* unknown type */
  op_par_loop(k2, "invalid_gbl", edges, 3, a);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_par_loop 'invalid_gbl', arg 1: op_arg_gbl", "dbl");
  CHECK_DBL(g, 10.5);
  CHECK_UNCHANGED(ev, 3, 5.0);
  CHECK_UNCHANGED(x, 3, 5.0);

  /* After all that, a good loop runs and clears the error. */
  a[1] = op_arg_dat(x, 0, pedge, 1, "double", OP_INC);
  op_par_loop(k2, "good", edges, 2, a);
  CHECK_OK();
  CHECK_UNCHANGED(ev, 3, 6.0);
  CHECK_UNCHANGED(x, 3, 6.0);

  op_exit();
  return 0;
}
