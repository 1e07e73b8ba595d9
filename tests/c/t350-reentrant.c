/* Issue 9, point 10: a kernel that calls an op2 function gets a named error (OP2_ERR_REENTRANT),
 * not a deadlock on op2's lock, on the loop's own thread and on the threads backend's workers.
 * With the default handler the process exits with the message instead of hanging. */
#include "test.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the sanitized run (make test-c-sanitize): the abort-mode child exits from a worker thread
 * while its siblings still run, which LeakSanitizer cannot suspend, so it reports false leaks.
 * Leak checking is off for this program only; AddressSanitizer and UBSan stay on. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static const char *src = "int op_last_error_code(void);\n"
                         "void op_diagnostic_output(void);\n"
                         "void call_op2(int *code) { op_diagnostic_output(); code[0] = op_last_error_code(); }\n";

int main(int argc, char **argv)
{
  enum { N = 20000 };
  int *codes = malloc(sizeof(int) * N), i;
  pid_t pid;
  int status;
  CHECK(codes != NULL);
  test_init(argc, argv);
  {
    op_set s = op_decl_set(N, "s");
    op_dat c = op_decl_dat(s, 1, "int", NULL, "c");
    op_kernel k = op_decl_kernel(src, "call_op2");
    op_set_error_handler(OP_ERRORS_RETURN);
    if (strcmp(argv[1], "opencl") == 0 || strcmp(argv[1], "cuda") == 0) {
      /* Device code cannot reach op2's host functions at all: a named build error. */
      PAR_LOOP(k, "calls_op2", s, op_arg_dat(c, -1, OP_ID, 1, "int", OP_WRITE));
      CHECK_ERR(OP2_ERR_COMPILE, "op_par_loop 'calls_op2'", "op_diagnostic_output");
      op_exit();
      free(codes);
      return 0;
    }
    PAR_LOOP(k, "calls_op2", s, op_arg_dat(c, -1, OP_ID, 1, "int", OP_WRITE));
    op_flush(); /* under OP2_LAZY=1 the kernel runs here */
    CHECK_OK(); /* the loop itself succeeded; each kernel call got the error */
    op_set_error_handler(OP_ERRORS_ABORT);
    op_fetch_data(c, codes);
    for (i = 0; i < N; i++)
      if (codes[i] != OP2_ERR_REENTRANT) CHECK_INT(codes[i], OP2_ERR_REENTRANT);

    /* Abort mode: the process ends with exit status 1 (and the message), promptly. */
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(test_budget(60));
      if (getenv("T350_SHOW") == NULL) (void)!freopen("/dev/null", "w", stderr);
      PAR_LOOP(k, "calls_op2_abort", s, op_arg_dat(c, -1, OP_ID, 1, "int", OP_WRITE));
      op_flush();
      _exit(0); /* not reached: the default handler exits with 1 */
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 1);
  }
  op_exit();
  free(codes);
  return 0;
}
