/* Issue 9, point 11: after fork(), the child's loops work on every backend (the threads
 * backend must not wait for a pool whose threads stayed in the parent), or fail with a named
 * error (device runtimes do not survive fork(): OP2_ERR_DEVICE, never a hang); the parent's
 * loops work too. */
#include "test.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void run(op_kernel k, op_set s, op_dat x, double add, int n, double want)
{
  double sum = 0, *out = malloc(sizeof(double) * n);
  int i;
  CHECK(out != NULL);
  PAR_LOOP(k, "add", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW), op_arg_gbl(&add, 1, "double", OP_READ),
           op_arg_gbl(&sum, 1, "double", OP_INC));
  op_fetch_data(x, out);
  for (i = 0; i < n; i++)
    if (out[i] != (double)i + want) CHECK_DBL(out[i], (double)i + want);
  CHECK_DBL(sum, (double)n * (n - 1) / 2 + want * n);
  free(out);
}

int main(int argc, char **argv)
{
  enum { N = 100000 };
  double *xs = malloc(sizeof(double) * N);
  int i, status;
  pid_t pid;
  CHECK(xs != NULL);
  for (i = 0; i < N; i++) xs[i] = i;
  test_init(argc, argv);
  {
    op_set s = op_decl_set(N, "s");
    op_dat x = op_decl_dat(s, 1, "double", xs, "x");
    op_kernel k = op_decl_kernel("void add(double *x, const double *a, double *s) { x[0] += *a; *s += x[0]; }\n", "add");
    run(k, s, x, 1.0, N, 1.0);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(test_budget(60)); /* a hang fails the test instead of blocking it */
      if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
        double add = 2.0;
        op_set_error_handler(OP_ERRORS_RETURN);
        PAR_LOOP(k, "add", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW), op_arg_gbl(&add, 1, "double", OP_READ),
                 op_arg_gbl(&add, 1, "double", OP_INC));
        CHECK_ERR(OP2_ERR_DEVICE, "op_par_loop 'add'", "fork");
        op_exit();
        _exit(0);
      }
      run(k, s, x, 2.0, N, 3.0);
      /* A new loop shape (a compile) in the child works too. */
      {
        op_kernel k2 = op_decl_kernel("void twice(double *x) { x[0] *= 2.0; }\n", "twice");
        double out[3];
        PAR_LOOP(k2, "twice", s, op_arg_dat(x, -1, OP_ID, 1, "double", OP_RW));
        op_fetch_data_idx(x, out, 0, 2);
        CHECK_DBL(out[2], 10.0);
      }
      op_exit();
      _exit(0);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      test_fail_(__FILE__, __LINE__, "child failed (status 0x%x)", status);
    /* The parent is unaffected by the child's work. */
    run(k, s, x, 1.0, N, 2.0);
  }
  op_exit();
  free(xs);
  return 0;
}
