/* op_set_index_base: messages in the caller's numbering. With base 1 (what the Fortran module
 * sets) map entries, their positions and idx columns are quoted 1-based; base 0 is C's; any
 * other base is OP2_ERR_BAD_CONFIG and changes nothing. Stored values stay 0-based. */
#include "test.h"

int main(int argc, char **argv)
{
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  op_set nodes = op_decl_set(3, "nodes"), edges = op_decl_set(2, "edges");
  int bad[4] = {0, 1, 2, 3}, good[4] = {0, 1, 1, 2};
  double v[3] = {0, 0, 0};
  op_dat d = op_decl_dat(nodes, 1, "double", v, "d");

  CHECK(op_decl_map(edges, nodes, 2, bad, "pedge") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map 'pedge': entry 3 (element 1, position 1) is 3, outside [0, 3) of set 'nodes'");
  op_map m = op_decl_map(edges, nodes, 2, good, "pedge");
  CHECK_OK();
  op_arg_dat(d, 2, m, 1, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat 'd'", "idx 2 is out of range for map 'pedge' of dim 2 (use 0..1, or -2 for all)");

  op_set_index_base(1);
  CHECK_OK();
  CHECK(op_decl_map(edges, nodes, 2, bad, "pedge1") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map 'pedge1': entry 4 (element 2, position 2) is 4, outside 1..3 of set 'nodes'");
  op_arg_dat(d, 2, m, 1, "double", OP_READ); /* C's column 2 is Fortran's 3 */
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat 'd'", "idx 3 is out of range for map 'pedge' of dim 2 (use 1..2, or -2 for all)");
  op_arg_idx(5, m);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_idx: idx 6 is out of range for map 'pedge' of dim 2 (use 1..2)");

  op_set_index_base(2);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_set_index_base: base 2 (expected 0 for C or 1 for Fortran)");
  op_arg_dat(d, 2, m, 1, "double", OP_READ); /* still 1 */
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "use 1..2");

  op_set_index_base(0);
  op_arg_dat(d, 2, m, 1, "double", OP_READ);
  CHECK_ERR(OP2_ERR_ARG_IDX, "op_arg_dat", "use 0..1");
  op_exit();

  op_set_index_base(1); /* needs op_init */
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_set_index_base");
  return 0;
}
