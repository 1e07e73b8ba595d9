/* op_print_dat_to_txtfile: OP2's exact text ("<set size> <dim>", then one line per element, each
 * value with a leading space as " %+2.15lE" / " %+f" / " %+d", and op2's other types as " %u" /
 * " %+lld" / " %llu" / " %+d"); an unwritable path
 * answers OP2_ERR_IO. op_timing_output and op_diagnostic_output run without error. */
#include "test.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

static char dir[] = "/tmp/op2-t120-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void expect_file(const char *file, int line, op_dat d, const char *name, const char *want)
{
  char path[256];
  char *got;
  snprintf(path, sizeof path, "%s/%s.txt", dir, name);
  op_print_dat_to_txtfile(d, path);
  if (op_last_error_code() != 0)
    test_fail_(file, line, "op_print_dat_to_txtfile '%s': error %d: %s", name,
               op_last_error_code(), op_last_error_message());
  got = test_read_file(path);
  if (got == NULL) test_fail_(file, line, "cannot read %s back", path);
  if (strcmp(got, want) != 0)
    test_fail_(file, line, "%s: got\n---\n%s---\nwant\n---\n%s---", name, got, want);
  free(got);
  unlink(path);
}

#define EXPECT_FILE(d, name, want) expect_file(__FILE__, __LINE__, d, name, want)

int main(int argc, char **argv)
{
  op_set s3, s2, s0;
  double dv[6] = {0.1, 1.0, -2.5, 1e300, 0.0, 123456789.125};
  float fv[3] = {0.1f, -1.5f, 3.0f};
  int iv[4] = {0, -1, INT_MAX, INT_MIN};
  unsigned uv[2] = {0u, 4294967295u};
  long long lv[2] = {-9000000000000000000LL, 42LL};
  unsigned long long ulv[2] = {18446744073709551615ULL, 7ULL};
  _Bool bv[3] = {1, 0, 1};

  test_init(argc, argv);
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);
  s3 = op_decl_set(3, "three");
  s2 = op_decl_set(2, "two");
  s0 = op_decl_set(0, "none");

  EXPECT_FILE(op_decl_dat(s3, 2, "double", dv, "dv"), "dv",
              "3 2\n +1.000000000000000E-01 +1.000000000000000E+00\n"
              " -2.500000000000000E+00 +1.000000000000000E+300\n"
              " +0.000000000000000E+00 +1.234567891250000E+08\n");
  EXPECT_FILE(op_decl_dat(s3, 1, "float", fv, "fv"), "fv", "3 1\n +0.100000\n -1.500000\n +3.000000\n");
  EXPECT_FILE(op_decl_dat(s2, 2, "int", iv, "iv"), "iv", "2 2\n +0 -1\n +2147483647 -2147483648\n");
  EXPECT_FILE(op_decl_dat(s2, 1, "uint", uv, "uv"), "uv", "2 1\n 0\n 4294967295\n");
  EXPECT_FILE(op_decl_dat(s2, 1, "ll", lv, "lv"), "lv", "2 1\n -9000000000000000000\n +42\n");
  EXPECT_FILE(op_decl_dat(s2, 1, "ull", ulv, "ulv"), "ulv", "2 1\n 18446744073709551615\n 7\n");
  EXPECT_FILE(op_decl_dat(s3, 1, "bool", bv, "bv"), "bv", "3 1\n +1\n +0\n +1\n");
  EXPECT_FILE(op_decl_dat(s0, 4, "double", NULL, "empty"), "empty", "0 4\n");

  /* After a loop: the printed values are the updated ones. */
  {
    op_dat d = op_decl_dat(s3, 1, "int", NULL, "n");
    op_kernel k = op_decl_kernel("void setn(const int *e, int *n) { *n = 10 * *e - 1; }\n", "setn");
    PAR_LOOP(k, "setn", s3, op_arg_idx(-1, OP_ID), op_arg_dat(d, -1, OP_ID, 1, "int", OP_WRITE));
    EXPECT_FILE(d, "n", "3 1\n -1\n +9\n +19\n");
  }

  /* A file that cannot be created. */
  {
    char bad[300];
    op_dat d = op_decl_dat(s2, 1, "int", NULL, "bad");
    snprintf(bad, sizeof bad, "%s/no/such/dir/out.txt", dir);
    op_set_error_handler(OP_ERRORS_RETURN);
    op_print_dat_to_txtfile(d, bad);
    CHECK_ERR(OP2_ERR_IO, "op_print_dat_to_txtfile", "'bad'", "no/such/dir");
    op_print_dat_to_txtfile(d, NULL);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_print_dat_to_txtfile", "file", "is NULL");
    op_print_dat_to_txtfile(NULL, bad);
    CHECK_ERR(OP2_ERR_NULL_ARGUMENT, "op_print_dat_to_txtfile", "dat", "is NULL");
    op_set_error_handler(OP_ERRORS_ABORT);
  }

  /* Timing and diagnostics print to stdout: keep the test silent. */
  {
    int fd = open("/dev/null", O_WRONLY);
    CHECK(fd >= 0);
    fflush(stdout);
    CHECK(dup2(fd, 1) == 1); /* the library may write to fd 1 directly */
    close(fd);
  }
  op_timing_output();
  CHECK_OK();
  op_diagnostic_output();
  CHECK_OK();
  fflush(stdout);

  op_exit();
  return 0;
}
