/* Issue 9, point 9: kernel parameter types are checked against the loop's arguments. A double*
 * kernel on a float dat, T* where a vector argument needs T**, a declared extent (x[2]) other
 * than the argument's dim (issue 24, point 8), or a wrong parameter count is
 * OP2_ERR_COMPILE naming the loop, the argument, the parameter and its kernel line; a const
 * difference is fine. Compiler warnings in a kernel are shown once per loop shape, with kernel
 * line numbers. */
#include "test.h"
#include <unistd.h>

/* Runs one loop with stderr captured into `buf`. */
static void captured(op_kernel k, const char *name, op_set set, int n, op_arg *a, char *buf, size_t cap)
{
  char path[] = "/tmp/op2-t348-XXXXXX";
  int fd = mkstemp(path), saved;
  FILE *f;
  size_t got;
  CHECK(fd >= 0);
  fflush(stderr);
  saved = dup(2);
  dup2(fd, 2);
  op_par_loop(k, name, set, n, a);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  f = fopen(path, "r");
  CHECK(f != NULL);
  got = fread(buf, 1, cap - 1, f);
  buf[got] = '\0';
  fclose(f);
  unlink(path);
}

int main(int argc, char **argv)
{
  char cache[] = "/tmp/op2-t348-cache-XXXXXX";
  char out[8192];
  int e2n[4] = {0, 1, 1, 2};
  float fs[3] = {1, 2, 3};
  double ds[3] = {1, 2, 3}, s[2];
  op_arg a[2];
  /* A private cache, so the warning's compile happens in this run on every backend. */
  CHECK(mkdtemp(cache) != NULL);
  setenv("OP2_CACHE_DIR", cache, 1);
  test_init(argc, argv);
  {
    op_set nodes = op_decl_set(3, "nodes"), edges = op_decl_set(2, "edges");
    op_map pe = op_decl_map(edges, nodes, 2, e2n, "pe");
    op_dat f = op_decl_dat(nodes, 1, "float", fs, "f");
    op_dat d = op_decl_dat(nodes, 1, "double", ds, "d");
    op_dat sum = op_decl_dat(edges, 1, "double", NULL, "sum");
    op_kernel kd = op_decl_kernel("void kd(const double *x,\n  double *s) { s[0] += x[0]; }\n", "kd");
    op_kernel kv = op_decl_kernel("void kv(const double *x,\n           double *s) { s[0] += x[0]; }\n", "kv");
    op_kernel kc = op_decl_kernel("void kc(double **x, double *s) { s[0] = x[0][0] + x[1][0]; }\n", "kc");
    op_kernel kx2 = op_decl_kernel("void kx2(const double x[2], double *s) { s[0] += x[0]; }\n", "kx2");
    op_kernel kx1 = op_decl_kernel("void kx1(const double x[1], double s[1]) { s[0] += x[0]; }\n", "kx1");
    op_kernel k3 = op_decl_kernel("void k3(const double *x, double *s, double *t) { s[0] = x[0]; (void)t; }\n", "k3");
    op_kernel kw = op_decl_kernel("void kw(const double *x, double *s) {\n#warning this kernel warns\n  s[0] = x[0];\n}\n", "kw");

    op_set_error_handler(OP_ERRORS_RETURN);
    a[0] = op_arg_dat(f, 0, pe, 1, "float", OP_READ);
    a[1] = op_arg_dat(sum, -1, OP_ID, 1, "double", OP_INC);
    op_par_loop(kd, "on_float", edges, 2, a);
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'on_float', arg 0 (dat 'f'", "kernel 'kd' parameter 1 'const double *x'",
              "(kernel line 1)", "is double*, but the argument needs float*");
    a[0] = op_arg_dat(d, -2, pe, 1, "double", OP_READ);
    op_par_loop(kv, "vector_as_single", edges, 2, a);
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'vector_as_single', arg 0 (dat 'd'", "parameter 1 'const double *x'",
              "needs double**");
    op_par_loop(k3, "count", edges, 2, a);
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'count'", "takes 3 parameter(s) but the loop passes 2");
    /* A declared extent is the argument's dim: x[2] on a dim-1 dat is an error, x[1] is not. */
    a[0] = op_arg_dat(d, 0, pe, 1, "double", OP_READ);
    a[1] = op_arg_dat(sum, -1, OP_ID, 1, "double", OP_INC);
    op_par_loop(kx2, "extent", edges, 2, a);
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'extent', arg 0 (dat 'd'", "kernel 'kx2' parameter 1 'const double x[2]'",
              "(kernel line 1)", "holds 2 value(s), but the argument has dim 1");
    op_par_loop(kx1, "extent_ok", edges, 2, a);
    CHECK_OK();
    a[1] = op_arg_dat(sum, -1, OP_ID, 1, "double", OP_WRITE);
    a[1].dim = 1;
    {
      op_arg b[2] = {op_arg_dat(d, 0, pe, 1, "double", OP_READ), op_arg_dat(sum, -1, OP_ID, 1, "double", OP_INC)};
      op_par_loop(kv, "second_param_line", edges, 2, b); /* fine: checked, runs */
      CHECK_OK();
    }
    op_set_error_handler(OP_ERRORS_ABORT);

    /* const differences are not errors: kc's double ** takes a READ vector argument. */
    a[0] = op_arg_dat(d, -2, pe, 1, "double", OP_READ);
    a[1] = op_arg_dat(sum, -1, OP_ID, 1, "double", OP_WRITE);
    op_par_loop(kc, "const_ok", edges, 2, a);
    op_fetch_data(sum, s);
    CHECK_DBL(s[0], 3.0);
    CHECK_DBL(s[1], 5.0);

    /* Warnings: printed on the compile, with the kernel's own line numbers; not again. */
    a[0] = op_arg_dat(d, 1, pe, 1, "double", OP_READ);
    captured(kw, "warned", edges, 2, a, out, sizeof out);
    if (strstr(out, "op2: warnings compiling op_par_loop 'warned' (kernel 'kw')") == NULL ||
        strstr(out, "kernel:kw:2:") == NULL || strstr(out, "this kernel warns") == NULL)
      test_fail_(__FILE__, __LINE__, "warning output not as expected: \"%s\"", out);
    captured(kw, "warned", edges, 2, a, out, sizeof out);
    CHECK_STR(out, "");
    op_fetch_data(sum, s);
    CHECK_DBL(s[0], 2.0);
    CHECK_DBL(s[1], 3.0);
  }
  op_exit();
  return 0;
}
