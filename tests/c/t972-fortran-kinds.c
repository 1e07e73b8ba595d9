/* Fortran kernel files: a dummy's C type follows the flags the file is compiled with (issue #37,
 * point 5). op2 asks the compiler (a probe compiled and run once per compiler and OP2_FFLAGS)
 * what `real`, `real(4)`, `real(8)`, `double precision`, `integer`, ... are, instead of
 * assuming their usual sizes. Per flag set (op_init again with OP2_FFLAGS set):
 *   - plain: `real` is float (a float dat runs, exact values; a double dat is OP2_ERR_COMPILE
 *     naming the argument), `integer` is int;
 *   - -fdefault-real-8: `real` is double (a double dat runs, exact values; a float dat is
 *     OP2_ERR_COMPILE naming the argument and saying why), a `real` module variable takes a
 *     double constant, `double precision` is a 16-byte real no dat matches (refused);
 *   - -fdefault-real-8 -fdefault-double-8: `double precision` is double again;
 *   - -fdefault-integer-8: `integer` is long long ("ll" dat runs, "int" refused), integer(4) int;
 *   - -freal-4-real-8: `real(4)` and `real` are double;
 *   - -fdefault-real-8 -fdefault-integer-8 together.
 * Device backends refuse Fortran kernels (t971); there only the probe's kinds are checked
 * through op_decl_kernel_file. */
#include "test.h"

static char dir[] = "/tmp/op2-t972-XXXXXX";
static char kfile[300];

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static const char *kernels_src = "module kc_t972\n"
                                 "  implicit none\n"
                                 "  real :: shift_t972 = 0.0\n"
                                 "contains\n"
                                 "  subroutine lin_t972(x, y)\n"
                                 "    real, intent(in) :: x\n"
                                 "    real, intent(out) :: y\n"
                                 "    y = 2.0 * x + 0.5 + shift_t972\n"
                                 "  end subroutine lin_t972\n"
                                 "  subroutine lin4_t972(x, y)\n"
                                 "    real(4), intent(in) :: x\n"
                                 "    real(kind=4), intent(out) :: y\n"
                                 "    y = 3.0 * x - 1.0\n"
                                 "  end subroutine lin4_t972\n"
                                 "  subroutine dp_t972(x, y)\n"
                                 "    double precision, intent(in) :: x\n"
                                 "    double precision, intent(out) :: y\n"
                                 "    y = 4.0d0 * x\n"
                                 "  end subroutine dp_t972\n"
                                 "  subroutine cnt_t972(i, j)\n"
                                 "    integer, intent(in) :: i\n"
                                 "    integer, intent(out) :: j\n"
                                 "    j = 3 * i + 1\n"
                                 "  end subroutine cnt_t972\n"
                                 "  subroutine cnt4_t972(i, j)\n"
                                 "    integer(4), intent(in) :: i\n"
                                 "    integer*4, intent(out) :: j\n"
                                 "    j = 5 * i\n"
                                 "  end subroutine cnt4_t972\n"
                                 "end module kc_t972\n";

#define N 16

/* What a flag set makes of `real`, `real(4)`, `double precision` and `integer`: the op2 type
   name of each (NULL: no op2 type matches, every dat is refused). */
struct flagset {
  const char *flags;
  const char *real, *real4, *dp, *integer;
};

static const char *other_real(const char *t) { return !strcmp(t, "double") ? "float" : "double"; }

static void run_set(const char *backend, int device, const struct flagset *f)
{
  char tok[300];
  double xd[N], yd[N];
  float xf[N], yf[N];
  int xi[N], yi[N];
  long long xl[N], yl[N];
  snprintf(tok, sizeof tok, "OP2_BACKEND=%s", backend);
  CHECK(setenv("OP2_FFLAGS", f->flags, 1) == 0);
  test_init_tokens("t972", tok, (const char *)NULL);

  for (int i = 0; i < N; i++) {
    xd[i] = i;
    xf[i] = (float)i;
    xi[i] = i;
    xl[i] = 3000000000LL + i; /* beyond int: a 4-byte integer would not hold it */
    yd[i] = yf[i] = -1;
    yi[i] = -1;
    yl[i] = -1;
  }
  op_set nodes = op_decl_set(N, "nodes");
  op_dat dx = op_decl_dat(nodes, 1, "double", xd, "dx");
  op_dat dy = op_decl_dat(nodes, 1, "double", yd, "dy");
  op_dat fx = op_decl_dat(nodes, 1, "float", xf, "fx");
  op_dat fy = op_decl_dat(nodes, 1, "float", yf, "fy");
  op_dat ix = op_decl_dat(nodes, 1, "int", xi, "ix");
  op_dat iy = op_decl_dat(nodes, 1, "int", yi, "iy");
  op_dat lx = op_decl_dat(nodes, 1, "ll", xl, "lx");
  op_dat ly = op_decl_dat(nodes, 1, "ll", yl, "ly");
  op_kernel lin = op_decl_kernel_file(kfile, "lin_t972");
  CHECK_OK();
  op_kernel lin4 = op_decl_kernel_file(kfile, "lin4_t972");
  op_kernel dp = op_decl_kernel_file(kfile, "dp_t972");
  op_kernel cnt = op_decl_kernel_file(kfile, "cnt_t972");
  op_kernel cnt4 = op_decl_kernel_file(kfile, "cnt4_t972");
  CHECK_OK();
  /* The module variable `real :: shift_t972` takes a constant of the type `real` is. */
  double shift_d = 0.25;
  float shift_f = 0.25f;
  if (!strcmp(f->real, "double"))
    op_decl_const(1, "double", &shift_d, "shift_t972");
  else
    op_decl_const(1, "float", &shift_f, "shift_t972");
  CHECK_OK();

#define DAT_X(t) (!strcmp((t), "double") ? dx : fx)
#define DAT_Y(t) (!strcmp((t), "double") ? dy : fy)
  if (device) {
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(lin, "lin", nodes, op_arg_dat(DAT_X(f->real), -1, OP_ID, 1, f->real, OP_READ),
             op_arg_dat(DAT_Y(f->real), -1, OP_ID, 1, f->real, OP_WRITE));
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'lin'", "Fortran");
    op_set_error_handler(OP_ERRORS_ABORT);
    op_exit();
    return;
  }

  /* `real`: the dat of its type runs, with exact values (and the constant reached the module
     variable); the other real type is refused, naming the argument. */
  PAR_LOOP(lin, "lin", nodes, op_arg_dat(DAT_X(f->real), -1, OP_ID, 1, f->real, OP_READ),
           op_arg_dat(DAT_Y(f->real), -1, OP_ID, 1, f->real, OP_WRITE));
  CHECK_OK();
  if (!strcmp(f->real, "double")) {
    op_fetch_data(dy, yd);
    for (int i = 0; i < N; i++) CHECK_DBL(yd[i], 2.0 * i + 0.75);
  } else {
    op_fetch_data(fy, yf);
    for (int i = 0; i < N; i++) CHECK_DBL(yf[i], 2.0 * i + 0.75);
  }
  const char *wrong = other_real(f->real);
  op_set_error_handler(OP_ERRORS_RETURN);
  PAR_LOOP(lin, "lin_wrong", nodes, op_arg_dat(DAT_X(wrong), -1, OP_ID, 1, wrong, OP_READ),
           op_arg_dat(DAT_Y(wrong), -1, OP_ID, 1, wrong, OP_WRITE));
  {
    char want[80];
    snprintf(want, sizeof want, "'%s x[1]'", f->real);
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'lin_wrong', arg 0 (dat '", want, "lin_t972", kfile);
    if (!strcmp(f->real, "double")) CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'lin_wrong'", "real is double", f->flags);
  }
  op_set_error_handler(OP_ERRORS_ABORT);

  /* `real(4)` */
  PAR_LOOP(lin4, "lin4", nodes, op_arg_dat(DAT_X(f->real4), -1, OP_ID, 1, f->real4, OP_READ),
           op_arg_dat(DAT_Y(f->real4), -1, OP_ID, 1, f->real4, OP_WRITE));
  CHECK_OK();
  if (!strcmp(f->real4, "double")) {
    op_fetch_data(dy, yd);
    for (int i = 0; i < N; i++) CHECK_DBL(yd[i], 3.0 * i - 1.0);
  } else {
    op_fetch_data(fy, yf);
    for (int i = 0; i < N; i++) CHECK_DBL(yf[i], 3.0 * i - 1.0);
  }

  /* `double precision`: double, or (-fdefault-real-8 alone) a 16-byte real: refused. */
  op_set_error_handler(OP_ERRORS_RETURN);
  PAR_LOOP(dp, "dp", nodes, op_arg_dat(dx, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(dy, -1, OP_ID, 1, "double", OP_WRITE));
  if (f->dp != NULL) {
    CHECK_OK();
    op_fetch_data(dy, yd);
    for (int i = 0; i < N; i++) CHECK_DBL(yd[i], 4.0 * i);
  } else {
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'dp', arg 0 (dat 'dx'", "'long double x[1]'", "dp_t972",
              "double precision is long double");
  }

  /* `integer`: int, or long long under -fdefault-integer-8 (values beyond int's range). */
  if (!strcmp(f->integer, "ll")) {
    PAR_LOOP(cnt, "cnt", nodes, op_arg_dat(lx, -1, OP_ID, 1, "ll", OP_READ),
             op_arg_dat(ly, -1, OP_ID, 1, "ll", OP_WRITE));
    CHECK_OK();
    op_fetch_data(ly, yl);
    for (int i = 0; i < N; i++) CHECK_INT(yl[i], 3 * (3000000000LL + i) + 1);
    PAR_LOOP(cnt, "cnt_wrong", nodes, op_arg_dat(ix, -1, OP_ID, 1, "int", OP_READ),
             op_arg_dat(iy, -1, OP_ID, 1, "int", OP_WRITE));
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'cnt_wrong', arg 0 (dat 'ix'", "'long long i[1]'", "cnt_t972",
              "integer is long long");
  } else {
    PAR_LOOP(cnt, "cnt", nodes, op_arg_dat(ix, -1, OP_ID, 1, "int", OP_READ),
             op_arg_dat(iy, -1, OP_ID, 1, "int", OP_WRITE));
    CHECK_OK();
    op_fetch_data(iy, yi);
    for (int i = 0; i < N; i++) CHECK_INT(yi[i], 3 * i + 1);
    PAR_LOOP(cnt, "cnt_wrong", nodes, op_arg_dat(lx, -1, OP_ID, 1, "ll", OP_READ),
             op_arg_dat(ly, -1, OP_ID, 1, "ll", OP_WRITE));
    CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'cnt_wrong', arg 0 (dat 'lx'", "'int i[1]'", "cnt_t972");
  }
  /* `integer(4)` and `integer*4` stay int whatever the default. */
  PAR_LOOP(cnt4, "cnt4", nodes, op_arg_dat(ix, -1, OP_ID, 1, "int", OP_READ),
           op_arg_dat(iy, -1, OP_ID, 1, "int", OP_WRITE));
  CHECK_OK();
  op_fetch_data(iy, yi);
  for (int i = 0; i < N; i++) CHECK_INT(yi[i], 5 * i);
  op_set_error_handler(OP_ERRORS_ABORT);
  op_exit();
}

int main(int argc, char **argv)
{
  FILE *fp;
  static const struct flagset sets[] = {
      {"", "float", "float", "double", "int"},
      {"-fdefault-real-8", "double", "float", NULL, "int"},
      {"-fdefault-real-8 -fdefault-double-8", "double", "float", "double", "int"},
      {"-fdefault-integer-8", "float", "float", "double", "ll"},
      {"-freal-4-real-8", "double", "double", "double", "int"},
      {"-fdefault-real-8 -fdefault-integer-8", "double", "float", NULL, "ll"},
  };
  const char *backend;
  int device;
  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  backend = argv[1];
  device = !strcmp(backend, "opencl") || !strcmp(backend, "cuda");
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);
  snprintf(kfile, sizeof kfile, "%s/kc_t972.f90", dir);
  fp = fopen(kfile, "w");
  CHECK(fp != NULL);
  CHECK(fputs(kernels_src, fp) >= 0);
  CHECK(fclose(fp) == 0);
  for (int s = 0; s < COUNT_OF(sets); s++) run_set(backend, device, &sets[s]);
  return 0;
}
