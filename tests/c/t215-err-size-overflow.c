/* Sizes that cannot be represented: a dat whose size in bytes overflows the address range
 * (2^30 elements x 2^30 doubles = 2^63 bytes) is a bad size (OP2_ERR_BAD_SIZE), not an
 * internal error, and op2 keeps working afterwards. */
#include "test.h"

int main(int argc, char **argv)
{
  op_set huge, s;
  op_dat d;
  int v[3] = {1, 2, 3}, out[3];

  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  huge = op_decl_set(1 << 30, "huge"); /* a set needs no memory per element */
  CHECK(huge != NULL);
  CHECK_OK();
  CHECK_INT(op_get_size(huge), 1 << 30);
  CHECK(op_decl_dat(huge, 1 << 30, "double", NULL, "qhuge") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat", "'qhuge'");
  CHECK(op_decl_dat_char(huge, 1 << 30, "ll", 8, NULL, "lhuge") == NULL);
  CHECK_ERR(OP2_ERR_BAD_SIZE, "op_decl_dat_char", "'lhuge'");

  s = op_decl_set(3, "small");
  d = op_decl_dat(s, 1, "int", v, "d");
  CHECK_OK();
  op_fetch_data(d, out);
  CHECK_INT(out[0] + out[1] + out[2], 6);
  op_exit();
  return 0;
}
