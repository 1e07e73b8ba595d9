/* Lifecycle errors: calls before op_init and after op_exit (OP2_ERR_NOT_INITIALISED), op_init
 * twice, an unknown backend, stale and forged handles (OP2_ERR_INVALID_HANDLE). */
#include "test.h"

int main(int argc, char **argv)
{
  char token[256];
  double x = 1.0, buf[4];
  op_set s, stale_set;
  op_dat stale_dat;
  op_kernel stale_kernel;
  op_map stale_map;
  const char *known[] = {"seq", "threads", "openmp", "opencl", "cuda", "check"};
  int available[6], i;

  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  snprintf(token, sizeof token, "OP2_BACKEND=%s", argv[1]);

  /* Before op_init: the handler can be set; every call answers NOT_INITIALISED. */
  op_set_error_handler(OP_ERRORS_RETURN);
  CHECK(op_decl_set(3, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set", "op_init");
  op_decl_const(1, "double", &x, "gam");
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_const", "op_init");
  CHECK(op_decl_kernel("void k(double *x) { *x = 1.0; }\n", "k") == NULL);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_kernel", "op_init");
  (void)op_arg_gbl(&x, 1, "double", OP_READ);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_arg_gbl", "op_init");
  (void)op_arg_idx(-1, OP_ID);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_arg_idx", "op_init");
  op_timing_output();
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_timing_output");
  CHECK_DBL(x, 1.0);

  /* An unknown backend: op_init fails (bad configuration or unavailable backend) and op2 stays
   * uninitialised; a later good op_init works. */
  test_init_tokens(argv[0], "OP2_BACKEND=no-such-backend", (const char *)NULL);
  CHECK(op_last_error_code() == OP2_ERR_BAD_CONFIG ||
        op_last_error_code() == OP2_ERR_BACKEND_UNAVAILABLE);
  CHECK_ERR(op_last_error_code(), "op_init", "no-such-backend");
  CHECK(op_decl_set(3, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set");

  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_OK();
  for (i = 0; i < COUNT_OF(known); i++) available[i] = op_backend_available(known[i]);
  s = op_decl_set(3, "nodes");
  CHECK(s != NULL);
  CHECK_OK();

  /* op_init twice. */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_ERR(OP2_ERR_ALREADY_INITIALISED, "op_init");
  /* ... and the first session is intact. */
  CHECK_INT(op_get_size(s), 3);
  CHECK_OK();

  stale_set = s;
  stale_dat = op_decl_dat(s, 1, "double", NULL, "q");
  stale_map = op_decl_map(s, s, 1, (int[]){2, 0, 1}, "m");
  stale_kernel = op_decl_kernel("void k(double *x) { *x = 1.0; }\n", "k");
  CHECK(stale_dat != NULL && stale_map != NULL && stale_kernel != NULL);
  op_exit();

  /* After op_exit. */
  CHECK(op_decl_set(3, "nodes") == NULL);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set", "op_init");
  op_fetch_data(stale_dat, buf);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_fetch_data");
  op_decl_const(1, "double", &x, "gam");
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_const");
  (void)op_arg_gbl(&x, 1, "double", OP_INC);
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_arg_gbl");
  {
    op_arg a = op_arg_gbl(&x, 1, "double", OP_INC);
    op_par_loop(stale_kernel, "late", stale_set, 1, &a);
    CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_par_loop");
  }
  op_diagnostic_output();
  CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_diagnostic_output");
  CHECK_DBL(x, 1.0);

  /* A known backend that this build or machine cannot run: OP2_ERR_BACKEND_UNAVAILABLE. */
  {
    for (i = 0; i < COUNT_OF(known); i++) {
      char t[64];
      if (available[i]) continue;
      snprintf(t, sizeof t, "OP2_BACKEND=%s", known[i]);
      test_init_tokens(argv[0], t, (const char *)NULL);
      /* the message may give the canonical name (openmp is threads) */
      CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_init",
                strcmp(known[i], "openmp") == 0 ? "threads" : known[i]);
      CHECK(op_decl_set(1, "x") == NULL);
      CHECK_ERR(OP2_ERR_NOT_INITIALISED, "op_decl_set");
    }
  }

  /* A new session: the old handles are stale. */
  test_init_tokens(argv[0], token, (const char *)NULL);
  CHECK_OK();
  (void)op_get_size(stale_set);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_get_size");
  op_fetch_data(stale_dat, buf);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_fetch_data");
  CHECK(op_decl_dat(stale_set, 1, "double", NULL, "q2") == NULL);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_decl_dat", "set");
  (void)op_arg_dat(stale_dat, -1, OP_ID, 1, "double", OP_READ);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_arg_dat");
  (void)op_arg_idx(0, stale_map);
  CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_arg_idx");
  {
    op_set s2 = op_decl_set(3, "nodes2");
    op_dat d2 = op_decl_dat(s2, 1, "double", NULL, "d2");
    op_arg a = op_arg_dat(d2, -1, OP_ID, 1, "double", OP_WRITE);
    CHECK_OK();
    op_par_loop(stale_kernel, "stale_kernel", s2, 1, &a);
    CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_par_loop", "'stale_kernel'");

    /* Forged handles: the address of something that is not an op2 object, and a handle of
     * another kind. */
    {
      double not_a_set[16] = {0};
      (void)op_get_size((op_set)(void *)not_a_set);
      CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_get_size");
      (void)op_get_size((op_set)(void *)d2);
      CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_get_size");
      op_fetch_data((op_dat)(void *)s2, buf);
      CHECK_ERR(OP2_ERR_INVALID_HANDLE, "op_fetch_data");
    }
    CHECK_INT(op_get_size(s2), 3);
    CHECK_OK();
  }
  op_exit();
  return 0;
}
