/* Declaration errors: NULL handles, names and data; negative set size; map dims and entries out
 * of range; dat dims and unknown types; _char sizes; constant names, types and dims. Each failed
 * declaration returns NULL and leaves later declarations working. */
#include "test.h"

int main(int argc, char **argv)
{
  op_set nodes, edges, empty;
  int good[8] = {0, 1, 1, 2, 2, 3, 3, 4};
  int bad[8] = {0, 1, 1, 2, 2, 3, 3, 12};
  int neg[8] = {-5, 1, 1, 2, 2, 3, 3, 4};
  double v[10] = {0};
  int one = 1;

  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);

  /* Sets. */
  CHECK(op_decl_set(-3, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_set", "'nodes'", "-3");
  CHECK(op_decl_set(5, NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_set", "name is NULL");
  nodes = op_decl_set(10, "nodes");
  CHECK(nodes != NULL);
  CHECK_OK();
  edges = op_decl_set(4, "edges");
  empty = op_decl_set(0, "empty");
  CHECK(edges != NULL && empty != NULL);

  /* Maps. */
  CHECK(op_decl_map(edges, nodes, 2, bad, "pedge") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'pedge'", "12", "element 3", "position 1",
            "'nodes'", "10");
  CHECK(op_decl_map(edges, nodes, 2, neg, "pneg") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'pneg'", "-5", "element 0", "position 0");
  CHECK(op_decl_map(edges, empty, 2, good, "pempty") == NULL);
  CHECK_ERR(OP2_ERR_MAP_OUT_OF_RANGE, "op_decl_map", "'pempty'", "'empty'");
  CHECK(op_decl_map(edges, nodes, 0, good, "pdim0") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_map", "'pdim0'", "0");
  CHECK(op_decl_map(edges, nodes, -2, good, "pdimneg") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_map", "'pdimneg'", "-2");
  CHECK(op_decl_map(NULL, nodes, 2, good, "pnullfrom") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map", "from", "is NULL");
  CHECK(op_decl_map(edges, NULL, 2, good, "pnullto") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map", "to", "is NULL");
  CHECK(op_decl_map(edges, nodes, 2, NULL, "pnulldata") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map", "'pnulldata'", "is NULL");
  CHECK(op_decl_map(edges, nodes, 2, good, NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_map", "name is NULL");
  CHECK(op_decl_map(edges, nodes, 2, good, "pedge") != NULL);
  CHECK_OK();

  /* Dats. */
  CHECK(op_decl_dat(NULL, 1, "double", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_dat", "set", "is NULL");
  CHECK(op_decl_dat(nodes, 0, "double", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat", "'q'", "0");
  CHECK(op_decl_dat(nodes, -4, "double", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat", "'q'", "-4");
  CHECK(op_decl_dat(nodes, 1, "doubel", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_dat", "'q'", "doubel");
  CHECK(op_decl_dat(nodes, 1, "", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_dat", "'q'");
  CHECK(op_decl_dat(nodes, 1, "long", v, "q") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_dat", "'q'", "long");
  CHECK(op_decl_dat(nodes, 1, NULL, v, "q") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_dat", "type", "is NULL");
  CHECK(op_decl_dat(nodes, 1, "double", v, NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_dat", "name is NULL");
  CHECK(op_decl_dat(nodes, 1, "double", v, "q") != NULL);
  CHECK_OK();

  /* _char forms: the element size must agree with the type. */
  CHECK(op_decl_dat_char(nodes, 1, "double", 4, (const char *)v, "qc") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat_char", "'qc'", "4");
  CHECK(op_decl_dat_char(nodes, 1, "int", 8, (const char *)v, "qc") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat_char", "'qc'", "8");
  CHECK(op_decl_dat_char(nodes, 1, "nope", 8, (const char *)v, "qc") == NULL);
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_dat_char", "'qc'", "nope");
  CHECK(op_decl_dat_char(nodes, 0, "double", 8, (const char *)v, "qc") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat_char", "'qc'");
  CHECK(op_decl_dat_char(nodes, 1, "double", 8, (const char *)v, "qc") != NULL);
  CHECK_OK();

  /* Constants. */
  op_decl_const(1, "int", &one, NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_const", "name is NULL");
  op_decl_const(1, "int", NULL, "c1");
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_const", "'c1'", "data", "is NULL");
  op_decl_const(1, NULL, &one, "c1");
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_const", "type", "is NULL");
  op_decl_const(0, "int", &one, "c1");
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_const", "'c1'", "0");
  op_decl_const(1, "quaternion", &one, "c1");
  CHECK_ERR(OP2_ERR_BAD_TYPE, "op_decl_const", "'c1'", "quaternion");
  op_decl_const(1, "int", &one, "1abc");
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_decl_const", "'1abc'");
  op_decl_const(1, "int", &one, "two words");
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_decl_const", "'two words'");
  op_decl_const(1, "int", &one, "");
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_decl_const");
  op_decl_const(1, "int", &one, "double"); /* a C keyword cannot be a global's name */
  CHECK_ERR(OP2_ERR_BAD_NAME, "op_decl_const", "'double'");
  op_decl_const_char(1, "double", 4, (const char *)v, "c2");
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_const_char", "'c2'", "4");
  op_decl_const(1, "int", &one, "c1");
  CHECK_OK();
  op_decl_const_char(1, "double", 8, (const char *)v, "c2");
  CHECK_OK();

  /* Everything declared after the failures works in a loop. */
  {
    int out[10], i;
    op_dat d = op_decl_dat(nodes, 1, "int", NULL, "d");
    op_kernel k = op_decl_kernel("void k(int *d) { *d = c1 + 1; }\n", "k");
    op_set_error_handler(OP_ERRORS_ABORT);
    PAR_LOOP(k, "k", nodes, op_arg_dat(d, -1, OP_ID, 1, "int", OP_WRITE));
    op_fetch_data(d, out);
    for (i = 0; i < 10; i++) CHECK_INT(out[i], 2);
  }

  op_exit();
  return 0;
}
