/* op_decl_kernel_file: a compile error in a kernel read from a file names the file and the line
 * in that file (generated code sets the kernel's #line origin to the file). */
#include "test.h"

static char dir[] = "/tmp/op2-t611-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
  char path[300], where[320];
  FILE *f;
  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);
  snprintf(path, sizeof path, "%s/broken_kernel.h", dir);
  f = fopen(path, "w");
  CHECK(f != NULL);
  /* The error is on line 4 of the file. */
  fputs("/* line 1 */\n"
        "void broken(double *x) {\n"
        "  double y = 1.0;\n"
        "  *x = y + undeclared_name_t611;\n"
        "}\n",
        f);
  CHECK(fclose(f) == 0);

  op_set s = op_decl_set(2, "s");
  op_dat x = op_decl_dat(s, 1, "double", NULL, "x");
  op_kernel k = op_decl_kernel_file(path, "broken");
  CHECK_OK();
  op_set_error_handler(OP_ERRORS_RETURN);
  PAR_LOOP(k, "broken", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_WRITE));
  snprintf(where, sizeof where, "%s:4:", path);
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'broken'", "undeclared_name_t611", where);
  op_set_error_handler(OP_ERRORS_ABORT);
  op_exit();
  return 0;
}
