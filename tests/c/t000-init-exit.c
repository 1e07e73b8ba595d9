/* Lifecycle: op_init / op_exit / op_init again, backend name, root, op_arg size. */
#include "test.h"

static const char *canonical(const char *b)
{
  return strcmp(b, "openmp") == 0 ? "threads" : b;
}

int main(int argc, char **argv)
{
  const char *backend = test_init(argc, argv);
  op_set s;
  op_dat d;
  double v[3] = {1.5, -2.0, 4.25}, out[3] = {0, 0, 0};
  int i;

  CHECK_OK();
  CHECK(op_backend_name() != NULL);
  if (strcmp(op_backend_name(), backend) != 0) CHECK_STR(op_backend_name(), canonical(backend));
  CHECK_INT(op_is_root(), 1);
  CHECK_INT(op_arg_size(), (int)sizeof(op_arg));
  CHECK_INT(sizeof(op_arg), 56);
  CHECK_INT(op_backend_available("seq"), 1);
  CHECK_INT(op_backend_available(canonical(backend)), 1);
  CHECK_INT(op_backend_available(backend), 1);
  CHECK_INT(op_backend_available("no-such-backend"), 0);

  s = op_decl_set(3, "cells");
  d = op_decl_dat(s, 1, "double", v, "q");
  CHECK(s != NULL && d != NULL);
  CHECK_INT(op_get_size(s), 3);
  op_exit();

  /* A second session starts afresh and works fully (declarations, a JIT loop, fetch). */
  test_init(argc, argv);
  CHECK_OK();
  if (strcmp(op_backend_name(), backend) != 0) CHECK_STR(op_backend_name(), canonical(backend));
  s = op_decl_set(3, "cells");
  d = op_decl_dat(s, 1, "double", v, "q");
  {
    op_kernel k = op_decl_kernel("void twice(double *q) { *q = 2.0 * *q; }\n", "twice");
    PAR_LOOP(k, "twice", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  }
  op_fetch_data(d, out);
  for (i = 0; i < 3; i++) CHECK_DBL(out[i], 2.0 * v[i]);
  op_exit();

  /* And a third, after which op_exit leaves nothing behind that makes a new op_init fail. */
  test_init(argc, argv);
  CHECK_OK();
  CHECK_INT(op_is_root(), 1);
  op_exit();
  return 0;
}
