/* op_decl_kernel_file with Fortran files (issue #24, points 3, 4 and 8): the subroutine is
 * compiled by gfortran and linked into the loop's library. A file-level subroutine on a direct
 * loop (exact values), a module procedure that uses another module found in the kernel's
 * directory (a parameter compiles in; op_decl_const values reach its variables) on an indirect OP_INC loop with an INC global; the used
 * module changed on disk and the kernel declared again gives the new values (its content is in
 * the cache key); a compile error names the Fortran file and line; a kernel whose dummies do not
 * match the loop's arguments (count, type, explicit shape) is OP2_ERR_COMPILE naming the kernel; device backends
 * refuse a Fortran kernel with OP2_ERR_BACKEND_UNAVAILABLE. */
#include "test.h"

static char dir[] = "/tmp/op2-t971-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void write_file(const char *name, const char *text, char *path, size_t cap)
{
  FILE *f;
  snprintf(path, cap, "%s/%s", dir, name);
  f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK(fputs(text, f) >= 0);
  CHECK(fclose(f) == 0);
}

static const char *consts_v1 = "module consts_t971\n"
                               "  implicit none\n"
                               "  real(8), parameter :: factor = 2.0_8\n"
                               "  real(8) :: shift_t971 = 100.0_8\n"
                               "  real(8), dimension(2) :: qv_t971\n"
                               "end module consts_t971\n";
static const char *consts_v2 = "module consts_t971\n"
                               "  implicit none\n"
                               "  real(8), parameter :: factor = 5.0_8\n"
                               "  real(8) :: shift_t971 = 100.0_8\n"
                               "  real(8), dimension(2) :: qv_t971\n"
                               "end module consts_t971\n";

#define N 100

int main(int argc, char **argv)
{
  char direct[300], kern[300], cpath[300], broken[300], where[340];
  double xv[2 * N], y[N], node[N], w[N];
  int ring[2 * N], count = 0;
  const char *backend = test_init(argc, argv);
  int device = !strcmp(backend, "opencl") || !strcmp(backend, "cuda");
  CHECK(mkdtemp(dir) != NULL);
  atexit(cleanup);

  write_file("direct_t971.f90",
             "! a file-level subroutine\n"
             "subroutine lin_t971(x, y)\n"
             "  implicit none\n"
             "  real(8), intent(in) :: x(2)\n"
             "  real(8), intent(out) :: y\n"
             "  y = 3.0_8 * x(1) + x(2)\n"
             "end subroutine lin_t971\n",
             direct, sizeof direct);
  write_file("consts_t971.f90", consts_v1, cpath, sizeof cpath);
  write_file("kern_t971.F90",
             "module kern_t971\n"
             "  use consts_t971\n"
             "  implicit none\n"
             "contains\n"
             "  subroutine spread_t971(a, b, w, n)\n"
             "    real(8), intent(inout) :: a, b\n"
             "    real(8), intent(in) :: w\n"
             "    integer(4), intent(inout) :: n\n"
             "    a = a + factor * w + shift_t971\n"
             "    b = b + factor * w + qv_t971(2)\n"
             "    n = n + 1\n"
             "  end subroutine spread_t971\n"
             "end module kern_t971\n",
             kern, sizeof kern);
  write_file("broken_t971.f90",
             "subroutine broken_t971(x)\n"
             "  implicit none\n"
             "  real(8) :: x\n"
             "  x = undeclared_t971 + 1.0_8\n"
             "end subroutine broken_t971\n",
             broken, sizeof broken);

  for (int i = 0; i < N; i++) {
    xv[2 * i] = i;
    xv[2 * i + 1] = 0.5 * i;
    node[i] = 0.0;
    w[i] = i + 1;
    ring[2 * i] = i;
    ring[2 * i + 1] = (i + 1) % N;
    y[i] = -1.0;
  }
  op_set nodes = op_decl_set(N, "nodes");
  op_set edges = op_decl_set(N, "edges");
  op_map e2n = op_decl_map(edges, nodes, 2, ring, "e2n");
  op_dat x = op_decl_dat(nodes, 2, "double", xv, "x");
  op_dat yd = op_decl_dat(nodes, 1, "double", y, "y");
  op_dat nd = op_decl_dat(nodes, 1, "double", node, "node");
  op_dat wd = op_decl_dat(edges, 1, "double", w, "w");
  double shift = 0.25, qv[2] = {0.5, 0.125};
  op_decl_const(1, "double", &shift, "shift_t971");
  op_decl_const(2, "double", qv, "qv_t971");
  op_kernel lin = op_decl_kernel_file(direct, "lin_t971");
  CHECK_OK();
  op_kernel spread = op_decl_kernel_file(kern, "spread_t971");
  CHECK_OK();

  if (device) {
    op_set_error_handler(OP_ERRORS_RETURN);
    PAR_LOOP(lin, "lin", nodes, op_arg_dat(x, -1, OP_ID, 2, "double", OP_READ),
             op_arg_dat(yd, -1, OP_ID, 1, "double", OP_WRITE));
    CHECK_ERR(OP2_ERR_BACKEND_UNAVAILABLE, "op_par_loop 'lin'", "lin_t971", "Fortran", backend);
    op_exit();
    return 0;
  }

  PAR_LOOP(lin, "lin", nodes, op_arg_dat(x, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(yd, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_OK();
  op_fetch_data(yd, y);
  for (int i = 0; i < N; i++) CHECK_DBL(y[i], 3.0 * i + 0.5 * i);

  PAR_LOOP(spread, "spread", edges, op_arg_dat(nd, 0, e2n, 1, "double", OP_INC),
           op_arg_dat(nd, 1, e2n, 1, "double", OP_INC), op_arg_dat(wd, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_OK();
  CHECK_INT(count, N);
  op_fetch_data(nd, node);
  /* node i gets factor * (w[i] + w[i-1]) = 2 * ((i + 1) + i) (node 0: 2 * (1 + N)), plus the
   * constants shift_t971 (0.25) and qv_t971(2) (0.125) copied into the module's variables */
  for (int i = 0; i < N; i++) CHECK_DBL(node[i], 2.0 * (i == 0 ? 1 + N : 2 * i + 1) + 0.375);

  /* The used module changes: declared again, the kernel computes with the new parameter. */
  write_file("consts_t971.f90", consts_v2, cpath, sizeof cpath);
  op_kernel spread2 = op_decl_kernel_file(kern, "spread_t971");
  CHECK_OK();
  count = 0;
  PAR_LOOP(spread2, "spread2", edges, op_arg_dat(nd, 0, e2n, 1, "double", OP_INC),
           op_arg_dat(nd, 1, e2n, 1, "double", OP_INC), op_arg_dat(wd, -1, OP_ID, 1, "double", OP_READ),
           op_arg_gbl(&count, 1, "int", OP_INC));
  CHECK_OK();
  CHECK_INT(count, N);
  op_fetch_data(nd, node);
  for (int i = 0; i < N; i++) CHECK_DBL(node[i], 7.0 * (i == 0 ? 1 + N : 2 * i + 1) + 0.75);

  op_set_error_handler(OP_ERRORS_RETURN);
  /* A compile error names the Fortran file and line (4). */
  op_decl_kernel_file(broken, "broken_t971");
  snprintf(where, sizeof where, "%s:4:", broken);
  CHECK_ERR(OP2_ERR_COMPILE, "op_decl_kernel_file 'broken_t971'", where, "undeclared_t971");
  /* A subroutine the file does not define. */
  op_decl_kernel_file(direct, "nothere_t971");
  CHECK_ERR(OP2_ERR_BAD_KERNEL, "op_decl_kernel_file 'nothere_t971'", "nothere_t971", "direct_t971.f90");
  /* Dummies against arguments: too few arguments, then an int dat for real(8) y. */
  PAR_LOOP(lin, "lin_count", nodes, op_arg_dat(x, -1, OP_ID, 2, "double", OP_READ));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'lin_count'", "lin_t971", "takes 2 parameter(s)", "passes 1");
  int iv[N] = {0};
  op_dat id = op_decl_dat(nodes, 1, "int", iv, "ints");
  PAR_LOOP(lin, "lin_type", nodes, op_arg_dat(x, -1, OP_ID, 2, "double", OP_READ),
           op_arg_dat(id, -1, OP_ID, 1, "int", OP_WRITE));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'lin_type'", "lin_t971", "'ints'", "'double y[1]'", "int");
  /* A dummy's explicit shape against the argument's dim: x(2) given a dim-1 dat; the message
     names the subroutine and its file, not the stand-in's lines. */
  PAR_LOOP(lin, "lin_dim", nodes, op_arg_dat(yd, -1, OP_ID, 1, "double", OP_READ),
           op_arg_dat(nd, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'lin_dim', arg 0 (dat 'y'", "'double x[2]'",
            "holds 2 value(s), but the argument has dim 1", "Fortran subroutine 'lin_t971' of '", direct);
  CHECK(strstr(op_last_error_message(), "kernel line") == NULL);
  /* A constant whose size differs from the module variable of its name would never reach the
     kernel: a named error, not a kernel reading the variable unset. */
  char bad[300];
  write_file("badconst_t971.f90",
             "module badconst_t971\n"
             "  implicit none\n"
             "  real(8), dimension(3) :: wrong_t971\n"
             "contains\n"
             "  subroutine usebad_t971(y)\n"
             "    real(8) :: y\n"
             "    y = wrong_t971(1)\n"
             "  end subroutine usebad_t971\n"
             "end module badconst_t971\n",
             bad, sizeof bad);
  double wrong[2] = {1.0, 2.0};
  op_decl_const(2, "double", wrong, "wrong_t971");
  op_kernel usebad = op_decl_kernel_file(bad, "usebad_t971");
  CHECK_OK();
  PAR_LOOP(usebad, "usebad", nodes, op_arg_dat(yd, -1, OP_ID, 1, "double", OP_WRITE));
  CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'usebad'", "constant 'wrong_t971'", "2 value(s) of type double",
            "holds 3 of type double", "usebad_t971");
  op_set_error_handler(OP_ERRORS_ABORT);
  op_exit();
  return 0;
}
