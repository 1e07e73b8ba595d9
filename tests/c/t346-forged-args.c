/* Issue 9, point 8: op_par_loop checks every field of each op_arg again, not only its handles.
 * An op_arg is the caller's memory; one built correctly and then changed (idx, dim, acc, type,
 * kind, opt, map or dat swapped for one that does not fit) is a named error, never an access out
 * of bounds, and the data stays untouched. */
#include "test.h"

#define FORGE(field, value)                                                                      \
  do {                                                                                           \
    a[0] = good;                                                                                 \
    a[0].field = (value);                                                                        \
    op_par_loop(k, "forged", edges, 2, a);                                                       \
  } while (0)

int main(int argc, char **argv)
{
  int e2n[6] = {0, 1, 1, 2, 2, 3}, c2n[3] = {0, 1, 2};
  double xs[4] = {1, 2, 3, 4}, before[4], after[4], ev[3] = {0};
  op_arg a[2], good;
  test_init(argc, argv);
  {
    op_set nodes = op_decl_set(4, "nodes"), edges = op_decl_set(3, "edges");
    op_set other = op_decl_set(3, "other");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_map to_other = op_decl_map(edges, other, 1, c2n, "to_other");
    op_dat x = op_decl_dat(nodes, 1, "double", xs, "x");
    op_dat xo = op_decl_dat(other, 1, "double", NULL, "xo");
    op_dat e = op_decl_dat(edges, 1, "double", ev, "e");
    op_kernel k = op_decl_kernel("void k(const double *x, double *e) { e[0] += x[0]; }\n", "k");
    good = op_arg_dat(x, 1, pe, 1, "double", OP_READ);
    a[1] = op_arg_dat(e, -1, OP_ID, 1, "double", OP_RW);
    op_fetch_data(x, before);
    op_set_error_handler(OP_ERRORS_RETURN);

    FORGE(idx, 2);
    CHECK_ERR(OP2_ERR_ARG_IDX, "op_par_loop 'forged', arg 0", "idx 2 is out of range for map 'pe'");
    FORGE(idx, 1000000);
    CHECK_ERR(OP2_ERR_ARG_IDX, "op_par_loop 'forged', arg 0", "idx 1000000");
    FORGE(idx, -3);
    CHECK_ERR(OP2_ERR_ARG_IDX, "op_par_loop 'forged', arg 0", "idx -3");
    FORGE(dim, 1000);
    CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_par_loop 'forged', arg 0", "dim 1000 disagrees");
    FORGE(acc, 17);
    CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_par_loop 'forged', arg 0", "access 17");
    FORGE(acc, OP_MAX);
    CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_par_loop 'forged', arg 0", "only allowed on globals");
    FORGE(type_code, 1);
    CHECK(op_last_error_code() == OP2_ERR_ARG_MISMATCH || op_last_error_code() == OP2_ERR_ARG_INVALID);
    FORGE(type_code, 999);
    CHECK_ERR(OP2_ERR_ARG_INVALID, "op_par_loop 'forged', arg 0", "type code 999");
    FORGE(kind, 77);
    CHECK_ERR(OP2_ERR_ARG_INVALID, "op_par_loop 'forged', arg 0", "kind 77");
    FORGE(opt, 5);
    CHECK_ERR(OP2_ERR_ARG_INVALID, "op_par_loop 'forged', arg 0", "opt field 5");
    /* A map whose target is not the dat's set (to_other reaches 'other', x lives on 'nodes'). */
    FORGE(map, to_other);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop 'forged', arg 0", "map 'to_other' targets set 'other'");
    /* A dat swapped for one on another set than the map reaches. */
    FORGE(dat, xo);
    CHECK_ERR(OP2_ERR_ARG_SET, "op_par_loop 'forged', arg 0", "'xo'");
    /* Direct access forged onto an indirect argument. */
    FORGE(map, OP_ID);
    CHECK_ERR(OP2_ERR_ARG_IDX, "op_par_loop 'forged', arg 0", "idx must be -1 with OP_ID");
    /* A global whose dim or access was changed, and an op_arg_idx out of range. */
    {
      double g = 1;
      op_arg gb = op_arg_gbl(&g, 1, "double", OP_INC);
      op_kernel kg = op_decl_kernel("void kg(const double *x, double *g) { g[0] += x[0]; }\n", "kg");
      a[0] = good;
      a[1] = gb;
      a[1].dim = 0;
      op_par_loop(kg, "forged_gbl", edges, 2, a);
      CHECK_ERR(OP2_ERR_BAD_SIZE, "op_par_loop 'forged_gbl', arg 1", "dim 0");
      a[1] = gb;
      a[1].acc = OP_WRITE;
      op_par_loop(kg, "forged_gbl", edges, 2, a);
      CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_par_loop 'forged_gbl', arg 1", "OP_WRITE");
      a[1] = gb;
      a[1].data = NULL;
      op_par_loop(kg, "forged_gbl", edges, 2, a);
      CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_par_loop 'forged_gbl', arg 1", "data is NULL");
      a[1] = op_arg_idx(0, pe);
      a[1].idx = 9;
      op_par_loop(op_decl_kernel("void ki(const double *x, const int *i) { (void)x; (void)i; }\n", "ki"),
                  "forged_idx", edges, 2, a);
      CHECK_ERR(OP2_ERR_ARG_IDX, "op_par_loop 'forged_idx', arg 1", "idx 9");
      CHECK_DBL(g, 1.0);
    }
    op_set_error_handler(OP_ERRORS_ABORT);
    op_fetch_data(x, after);
    CHECK(memcmp(before, after, sizeof before) == 0);
    op_fetch_data(e, ev);
    CHECK_DBL(ev[0] + ev[1] + ev[2], 0.0);
    /* The genuine argument still works. */
    a[0] = good;
    a[1] = op_arg_dat(e, -1, OP_ID, 1, "double", OP_RW);
    op_par_loop(k, "genuine", edges, 2, a);
    op_fetch_data(e, ev);
    CHECK_DBL(ev[0], 2.0);
    CHECK_DBL(ev[1], 3.0);
    CHECK_DBL(ev[2], 4.0);
  }
  op_exit();
  return 0;
}
