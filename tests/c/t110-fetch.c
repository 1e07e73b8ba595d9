/* op_fetch_data and op_fetch_data_idx (inclusive range) after a loop changed the data; bad
 * ranges answer OP2_ERR_BAD_RANGE and write nothing. */
#include "test.h"

#define N 50

int main(int argc, char **argv)
{
  double v[2 * N], out[2 * N + 4];
  int i;
  op_set s;
  op_dat d;
  op_kernel k;

  test_init(argc, argv);
  for (i = 0; i < 2 * N; i++) v[i] = i;
  s = op_decl_set(N, "cells");
  d = op_decl_dat(s, 2, "double", v, "q");
  k = op_decl_kernel("void neg(double *q) { q[0] = -q[0]; q[1] = q[1] + 0.5; }\n", "neg");
  PAR_LOOP(k, "neg", s, op_arg_dat(d, -1, OP_ID, 2, "double", OP_RW));

  for (i = 0; i < 2 * N + 4; i++) out[i] = 1234.0;
  op_fetch_data(d, out);
  CHECK_OK();
  for (i = 0; i < N; i++) {
    CHECK_DBL(out[2 * i], -(double)(2 * i));
    CHECK_DBL(out[2 * i + 1], 2 * i + 1.5);
  }
  for (i = 2 * N; i < 2 * N + 4; i++) CHECK_DBL(out[i], 1234.0); /* nothing past the end */

  /* Elements 10..12 inclusive: 3 elements, 6 values, at the start of the buffer. */
  for (i = 0; i < 2 * N + 4; i++) out[i] = 1234.0;
  op_fetch_data_idx(d, out, 10, 12);
  CHECK_OK();
  for (i = 0; i < 3; i++) {
    CHECK_DBL(out[2 * i], -(double)(2 * (10 + i)));
    CHECK_DBL(out[2 * i + 1], 2 * (10 + i) + 1.5);
  }
  for (i = 6; i < 2 * N + 4; i++) CHECK_DBL(out[i], 1234.0);
  for (i = 0; i < 2 * N + 4; i++) out[i] = 1234.0;

  /* A single element, the first and the last; the whole range. */
  op_fetch_data_idx(d, out, 0, 0);
  CHECK_DBL(out[0], 0.0);
  CHECK_DBL(out[1], 1.5);
  CHECK_DBL(out[2], 1234.0);
  op_fetch_data_idx(d, out, N - 1, N - 1);
  CHECK_DBL(out[0], -(double)(2 * N - 2));
  CHECK_DBL(out[1], 2 * N - 0.5);
  op_fetch_data_idx(d, out, 0, N - 1);
  CHECK_OK();
  for (i = 0; i < N; i++) CHECK_DBL(out[2 * i], -(double)(2 * i));

  /* Bad ranges. */
  op_set_error_handler(OP_ERRORS_RETURN);
  for (i = 0; i < 2 * N + 4; i++) out[i] = 1234.0;
  op_fetch_data_idx(d, out, 5, 4);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_fetch_data_idx", "'q'", "5", "4");
  op_fetch_data_idx(d, out, -1, 3);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_fetch_data_idx", "'q'", "-1");
  op_fetch_data_idx(d, out, 0, N);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_fetch_data_idx", "'q'", "50");
  op_fetch_data_idx(d, out, 60, 70);
  CHECK_ERR(OP2_ERR_BAD_RANGE, "op_fetch_data_idx", "'q'", "60", "70");
  for (i = 0; i < 2 * N + 4; i++) CHECK_DBL(out[i], 1234.0);
  op_fetch_data_idx(d, NULL, 0, 1);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data_idx", "'q'", "data", "is NULL");
  op_fetch_data(d, NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data", "'q'", "data", "is NULL");
  op_fetch_data(NULL, out);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data", "dat", "is NULL");
  op_fetch_data_idx(NULL, out, 0, 0);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_fetch_data_idx", "dat", "is NULL");
  /* A good call afterwards clears the error. */
  op_fetch_data_idx(d, out, 1, 1);
  CHECK_OK();
  CHECK_DBL(out[0], -2.0);

  /* Empty set: a whole fetch is fine, any index range is not. */
  {
    op_set s0 = op_decl_set(0, "none");
    op_dat d0 = op_decl_dat(s0, 1, "int", NULL, "z");
    int dummy = 5;
    op_fetch_data(d0, &dummy);
    CHECK_OK();
    CHECK_INT(dummy, 5);
    op_fetch_data_idx(d0, &dummy, 0, 0);
    CHECK_ERR(OP2_ERR_BAD_RANGE, "op_fetch_data_idx", "'z'");
    CHECK_INT(dummy, 5);
  }

  op_exit();
  return 0;
}
