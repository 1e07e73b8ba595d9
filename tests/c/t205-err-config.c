/* Configuration values that cannot be used make op_init fail with OP2_ERR_BAD_CONFIG, whether
 * they come as op_init tokens or from the environment; op2 stays uninitialised, and a good
 * op_init afterwards works. */
#include "test.h"

static char backend[256];

static void expect_bad_token(const char *file, int line, const char *prog, const char *token,
                             const char *value)
{
  test_init_tokens(prog, backend, token, (const char *)NULL);
  test_check_err_(file, line, OP2_ERR_BAD_CONFIG, "op_init", value, (const char *)NULL);
  if (op_decl_set(1, "s") != NULL) test_fail_(file, line, "op2 initialised after a bad op_init");
  test_check_err_(file, line, OP2_ERR_NOT_INITIALISED, "op_decl_set", (const char *)NULL);
}
#define EXPECT_BAD_TOKEN(token, value) expect_bad_token(__FILE__, __LINE__, argv[0], token, value)

static void expect_bad_env(const char *file, int line, const char *prog, const char *var,
                           const char *value)
{
  setenv(var, value, 1);
  test_init_tokens(prog, backend, (const char *)NULL);
  test_check_err_(file, line, OP2_ERR_BAD_CONFIG, "op_init", var, value, (const char *)NULL);
  unsetenv(var);
}
#define EXPECT_BAD_ENV(var, value) expect_bad_env(__FILE__, __LINE__, argv[0], var, value)

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  snprintf(backend, sizeof backend, "OP2_BACKEND=%s", argv[1]);
  op_set_error_handler(OP_ERRORS_RETURN);

  EXPECT_BAD_TOKEN("OP2_ERROR_HANDLER=sometimes", "sometimes");
  EXPECT_BAD_TOKEN("OP2_NUM_THREADS=abc", "abc");
  EXPECT_BAD_TOKEN("OP2_NUM_THREADS=0", "OP2_NUM_THREADS");
  EXPECT_BAD_TOKEN("OP2_NUM_THREADS=-2", "-2");
  EXPECT_BAD_TOKEN("OP_PART_SIZE=-5", "-5");
  EXPECT_BAD_TOKEN("OP_PART_SIZE=zero", "zero");
  EXPECT_BAD_TOKEN("OP_BLOCK_SIZE=x", "OP_BLOCK_SIZE");

  EXPECT_BAD_ENV("OP2_NUM_THREADS", "lots");
  EXPECT_BAD_ENV("OP_PART_SIZE", "-1");
  EXPECT_BAD_ENV("OP2_ERROR_HANDLER", "never");

  /* Tokens op2 does not know are the program's own and are ignored. */
  test_init_tokens(argv[0], "--my-flag", backend, "MY_SETTING=1", (const char *)NULL);
  CHECK_OK();
  {
    op_set s = op_decl_set(4, "s");
    op_dat d = op_decl_dat(s, 1, "int", NULL, "d");
    int out[4], i;
    op_kernel k = op_decl_kernel("void seven(int *d) { *d = 7; }\n", "seven");
    PAR_LOOP(k, "seven", s, op_arg_dat(d, -1, OP_ID, 1, "int", OP_WRITE));
    CHECK_OK();
    op_fetch_data(d, out);
    for (i = 0; i < 4; i++) CHECK_INT(out[i], 7);
  }
  op_exit();
  return 0;
}
