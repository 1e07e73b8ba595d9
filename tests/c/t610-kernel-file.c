/* op_decl_kernel_file: the kernel's source comes from a file (OP2 apps keep each kernel in
 * name.h); loops run it as any kernel. A missing file is OP2_ERR_IO naming the file; a file that
 * does not define the kernel is OP2_ERR_BAD_KERNEL naming the file. */
#include "test.h"

#include <unistd.h>

static char dir[] = "/tmp/op2-t610-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK(fputs(text, f) >= 0);
  CHECK(fclose(f) == 0);
}

int main(int argc, char **argv)
{
  char path[300], missing[300], other[300];
  double xv[4] = {1, 2, 3, 4}, out[4];
  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);

  snprintf(path, sizeof path, "%s/scale.h", dir);
  write_file(path, "/* scale.h: as an OP2 app keeps it */\n"
                   "static inline double twice(double v) { return 2.0 * v; }\n"
                   "inline void scale(const double *x, double *y) {\n"
                   "  *y = twice(*x) + factor;\n"
                   "}\n");
  {
    double factor = 0.5;
    op_set s = op_decl_set(4, "s");
    op_dat x = op_decl_dat(s, 1, "double", xv, "x");
    op_dat y = op_decl_dat(s, 1, "double", NULL, "y");
    op_decl_const(1, "double", &factor, "factor");
    op_kernel k = op_decl_kernel_file(path, "scale");
    CHECK_OK();
    CHECK(k != NULL);
    PAR_LOOP(k, "scale", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_READ),
             op_arg_dat(y, -1, OP_ID, 1, "double", OP_WRITE));
    op_fetch_data(y, out);
    for (int i = 0; i < 4; i++) CHECK_DBL(out[i], 2.0 * xv[i] + 0.5);
  }

  op_set_error_handler(OP_ERRORS_RETURN);
  snprintf(missing, sizeof missing, "%s/no_such_kernel.h", dir);
  CHECK(op_decl_kernel_file(missing, "scale") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_kernel_file", "'scale'", "no_such_kernel.h");
  /* A directory is not readable as a file. */
  CHECK(op_decl_kernel_file(dir, "scale") == NULL);
  CHECK_ERR(OP2_ERR_IO, "op_decl_kernel_file", dir);
  snprintf(other, sizeof other, "%s/other.h", dir);
  write_file(other, "void not_it(double *x) { *x = 1; }\n");
  CHECK(op_decl_kernel_file(other, "scale") == NULL);
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel_file", "no function named 'scale'", "other.h");
  CHECK(op_decl_kernel_file(NULL, "scale") == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_kernel_file", "path");
  CHECK(op_decl_kernel_file(path, NULL) == NULL);
  CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_decl_kernel_file", "name");
  op_set_error_handler(OP_ERRORS_ABORT);

  op_exit();
  return 0;
}
