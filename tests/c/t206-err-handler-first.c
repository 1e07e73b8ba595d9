/* Issue 9, point 12: OP2_ERROR_HANDLER=return given in the same op_init governs every bad
 * configuration value of that op_init (backend name, thread count, part size, block size), not
 * only the cache directory: op_init returns with OP2_ERR_BAD_CONFIG instead of exiting. The
 * handler starts in abort mode here, so a regression exits the test with status 1. */
#include "test.h"

static void bad(const char *prog, const char *token, const char *what)
{
  test_init_tokens(prog, "OP2_ERROR_HANDLER=return", token, (const char *)NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", what);
  op_set_error_handler(OP_ERRORS_ABORT);
}

int main(int argc, char **argv)
{
  char backend[256];
  if (argc < 2) return 2;
  bad(argv[0], "OP2_BACKEND=fortran", "unknown backend 'fortran'");
  bad(argv[0], "OP2_NUM_THREADS=lots", "lots");
  bad(argv[0], "OP_PART_SIZE=0", "OP_PART_SIZE");
  bad(argv[0], "OP_BLOCK_SIZE=-1", "OP_BLOCK_SIZE");
  /* The token order does not matter. */
  test_init_tokens(argv[0], "OP2_BACKEND=nope", "OP2_ERROR_HANDLER=return", (const char *)NULL);
  CHECK_ERR(OP2_ERR_BAD_CONFIG, "op_init", "'nope'");
  /* And a good op_init afterwards works. */
  snprintf(backend, sizeof backend, "OP2_BACKEND=%s", argv[1]);
  test_init_tokens(argv[0], backend, (const char *)NULL);
  CHECK_OK();
  op_exit();
  return 0;
}
