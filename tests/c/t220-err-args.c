/* Loop-argument errors reported by the op_arg_* calls themselves: dim / type mismatches, a map
 * whose to-set is not the dat's set, idx out of range, access modes not allowed, NULLs. */
#include "test.h"

int main(int argc, char **argv)
{
  op_set nodes, edges, cells;
  op_map pedge, pecell;
  op_dat q, x, res;
  int e2n[6] = {0, 1, 1, 2, 2, 0}, e2c[6] = {0, 1, 1, 0, 0, 1};
  double g = 0.0, gv[3] = {0, 0, 0};
  _Bool flag = 1;
  int ig = 0;

  test_init(argc, argv);
  nodes = op_decl_set(3, "nodes");
  edges = op_decl_set(3, "edges");
  cells = op_decl_set(2, "cells");
  pedge = op_decl_map(edges, nodes, 2, e2n, "pedge");
  pecell = op_decl_map(edges, cells, 2, e2c, "pecell");
  q = op_decl_dat(cells, 4, "double", NULL, "q");
  x = op_decl_dat(nodes, 2, "double", NULL, "x");
  res = op_decl_dat(nodes, 4, "double", NULL, "res");
  op_set_error_handler(OP_ERRORS_RETURN);

  /* dim / type disagreeing with the dat. */
  (void)op_arg_dat(q, 0, pecell, 3, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_dat", "'q'", "3", "4");
  (void)op_arg_dat(q, 0, pecell, 4, "float", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_dat", "'q'", "'float'", "'double'");
  (void)op_arg_dat(x, -1, OP_ID, 2, "int", OP_WRITE);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_arg_dat", "'x'", "'int'", "'double'");
  (void)op_arg_dat(x, -1, OP_ID, 2, "dbl", OP_WRITE);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_arg_dat", "'x'", "dbl");
  (void)op_arg_dat(q, 0, pecell, 4, "double", OP_READ);
  CHECK_OK();

  /* The map's to-set is not the dat's set. */
  (void)op_arg_dat(res, 0, pecell, 4, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_arg_dat", "'res'", "'pecell'", "'cells'", "'nodes'");
  (void)op_arg_dat(q, -2, pedge, 4, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_arg_dat", "'q'", "'pedge'", "'nodes'", "'cells'");

  /* idx out of range: >= dim, < -dim, and anything but -1 with OP_ID. */
  (void)op_arg_dat(x, 2, pedge, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "2", "'pedge'");
  (void)op_arg_dat(x, 7, pedge, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "7", "'pedge'");
  (void)op_arg_dat(x, -3, pedge, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "-3", "'pedge'");
  (void)op_arg_dat(x, -9, pedge, 2, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "-9");
  (void)op_arg_dat(x, 0, OP_ID, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "0");
  (void)op_arg_dat(x, -2, OP_ID, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "'x'", "-2");
  (void)op_arg_dat(x, 1, pedge, 2, "double", OP_READ);
  CHECK_OK();
  (void)op_arg_dat(x, -2, pedge, 2, "double", OP_READ);
  CHECK_OK();

  /* Access modes: MIN / MAX are for globals; values outside the enum. */
  (void)op_arg_dat(x, -1, OP_ID, 2, "double", OP_MIN);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_dat", "'x'");
  (void)op_arg_dat(x, 0, pedge, 2, "double", OP_MAX);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_dat", "'x'");
  (void)op_arg_dat(x, -1, OP_ID, 2, "double", 9);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_dat", "'x'", "9");
  (void)op_arg_dat(x, -1, OP_ID, 2, "double", -1);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_dat", "'x'", "-1");

  /* NULL dat / type. */
  (void)op_arg_dat(NULL, -1, OP_ID, 2, "double", OP_READ);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_dat", "dat", "is NULL");
  (void)op_arg_dat(x, -1, OP_ID, 2, NULL, OP_READ);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_dat", "type", "is NULL");

  /* op_opt_arg_dat checks like op_arg_dat. */
  (void)op_opt_arg_dat(1, q, 0, pecell, 3, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_MISMATCH, "op_opt_arg_dat", "'q'", "3", "4");
  (void)op_opt_arg_dat(1, res, 0, pecell, 4, "double", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_SET, "op_opt_arg_dat", "'res'", "'pecell'");
  (void)op_opt_arg_dat(1, q, 0, pecell, 4, "double", OP_READ);
  CHECK_OK();
  (void)op_opt_arg_dat(0, q, 0, pecell, 4, "double", OP_READ);
  CHECK_OK();

  /* Globals. */
  (void)op_arg_gbl(&flag, 1, "bool", OP_INC);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl", "bool");
  (void)op_arg_gbl(&flag, 1, "bool", OP_MIN);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl", "bool");
  (void)op_arg_gbl(&flag, 1, "bool", OP_MAX);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl", "bool");
  (void)op_arg_gbl(&flag, 1, "bool", OP_READ);
  CHECK_OK();
  (void)op_arg_gbl(&g, 1, "double", OP_WRITE); /* globals are READ, INC, MIN or MAX */
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl");
  (void)op_arg_gbl(&g, 1, "double", OP_RW);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl");
  (void)op_arg_gbl(&g, 1, "double", 17);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl", "17");
  (void)op_arg_gbl(NULL, 1, "double", OP_INC);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_gbl", "data", "is NULL");
  (void)op_arg_gbl(&g, 0, "double", OP_INC);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_arg_gbl", "0");
  (void)op_arg_gbl(&g, 1, "dubble", OP_INC);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_arg_gbl", "dubble");
  (void)op_arg_gbl(&g, 1, NULL, OP_INC);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_gbl", "type", "is NULL");
  (void)op_arg_gbl_char((char *)gv, 3, "double", 4, OP_INC);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_arg_gbl_char", "4");
  (void)op_arg_gbl_char((char *)&flag, 1, "bool", (int)sizeof(_Bool), OP_MAX);
  CHECK_ERR(OP2_ERR_ARG_ACCESS, "op_arg_gbl_char", "bool");
  (void)op_arg_gbl_char((char *)gv, 3, "double", 8, OP_INC);
  CHECK_OK();
  (void)op_arg_gbl(&ig, 1, "int", OP_MAX);
  CHECK_OK();

  /* op_arg_idx. */
  (void)op_arg_idx(2, pedge);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_idx", "'pedge'", "2");
  (void)op_arg_idx(-5, pedge);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_idx", "'pedge'", "-5");
  (void)op_arg_idx(0, OP_ID);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_idx", "0");
  (void)op_arg_idx(1, pedge);
  CHECK_OK();
  (void)op_arg_idx(-1, OP_ID);
  CHECK_OK();

  /* op_arg_info: its own fields (the ref is checked by op_par_loop). */
  (void)op_arg_info(NULL, 1, "int", 0);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_arg_info", "data", "is NULL");
  (void)op_arg_info(&ig, 0, "int", 0);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_arg_info", "0");
  (void)op_arg_info(&ig, 1, "whole", 0);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_arg_info", "whole");
  (void)op_arg_info(&ig, 1, "int", 0);
  CHECK_OK();

  op_exit();
  return 0;
}
