/* The default error handler prints "op2 error [code]: message" to stderr and exits non-zero;
 * OP_ERRORS_RETURN can be chosen by op_set_error_handler, the op_init token or the environment
 * variable OP2_ERROR_HANDLER=return, and OP_ERRORS_ABORT restores the default. Each case runs
 * in a child process whose exit status and stderr the parent checks. */
#include "test.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char backend_token[256];

/* What a child does after fork; it may exit on its own (through the handler). */
typedef void (*child_fn)(char *prog);

/* Runs fn in a child with stderr captured; returns the child's wait status, stderr in err. */
static int run_child(child_fn fn, char *prog, char *err, size_t errsize)
{
  int fds[2], status = 0;
  size_t used = 0;
  ssize_t n;
  pid_t pid;
  CHECK(pipe(fds) == 0);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    if (dup2(fds[1], 2) < 0) _exit(99);
    close(fds[1]);
    fn(prog);
    exit(0);
  }
  close(fds[1]);
  while (used + 1 < errsize && (n = read(fds[0], err + used, errsize - 1 - used)) > 0)
    used += (size_t)n;
  err[used] = '\0';
  close(fds[0]);
  CHECK(waitpid(pid, &status, 0) == pid);
  return status;
}

static void init_with(char *prog, const char *extra)
{
  char *args[3];
  int n = 0;
  args[n++] = prog;
  args[n++] = backend_token;
  if (extra != NULL) args[n++] = (char *)extra;
  op_init(n, args, 0);
}

/* Default handler: a bad declaration never returns. */
static void child_default(char *prog)
{
  init_with(prog, NULL);
  (void)op_decl_set(-3, "nodes");
  fprintf(stderr, "RETURNED\n");
  exit(0);
}

/* Default handler on a map out of range. */
static void child_default_map(char *prog)
{
  op_set a, b;
  init_with(prog, NULL);
  a = op_decl_set(2, "from");
  b = op_decl_set(2, "to");
  (void)op_decl_map(a, b, 1, (int[]){0, 5}, "badmap");
  fprintf(stderr, "RETURNED\n");
  exit(0);
}

/* Default handler on a call before op_init. */
static void child_default_uninit(char *prog)
{
  (void)prog;
  (void)op_decl_set(3, "nodes");
  fprintf(stderr, "RETURNED\n");
  exit(0);
}

/* RETURN set, then ABORT restores the default. */
static void child_return_then_abort(char *prog)
{
  init_with(prog, NULL);
  op_set_error_handler(OP_ERRORS_RETURN);
  if (op_decl_set(-3, "nodes") != NULL || op_last_error_code() != OP2_ERR_BAD_SIZE) exit(11);
  op_set_error_handler(OP_ERRORS_ABORT);
  (void)op_decl_set(-4, "nodes");
  fprintf(stderr, "RETURNED\n");
  exit(0);
}

/* The token OP2_ERROR_HANDLER=return: a bad call returns (the child exits 0 itself). */
static void child_token_return(char *prog)
{
  init_with(prog, "OP2_ERROR_HANDLER=return");
  if (op_last_error_code() != 0) exit(12);
  if (op_decl_set(-3, "nodes") != NULL) exit(13);
  if (op_last_error_code() != OP2_ERR_BAD_SIZE) exit(14);
  if (strstr(op_last_error_message(), "'nodes'") == NULL) exit(15);
  op_exit();
  exit(0);
}

/* The environment variable OP2_ERROR_HANDLER=return. */
static void child_env_return(char *prog)
{
  setenv("OP2_ERROR_HANDLER", "return", 1);
  init_with(prog, NULL);
  if (op_decl_set(-3, "nodes") != NULL) exit(16);
  if (op_last_error_code() != OP2_ERR_BAD_SIZE) exit(17);
  op_exit();
  exit(0);
}

/* The child was ended by the handler: non-zero exit, no "RETURNED", stderr starts as wanted. */
static void expect_aborted(const char *file, int line, int status, const char *err,
                           const char *prefix, const char *also)
{
  if (!WIFEXITED(status) && !WIFSIGNALED(status)) test_fail_(file, line, "odd status %d", status);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    test_fail_(file, line, "child exited 0; stderr: %s", err);
  if (strstr(err, "RETURNED") != NULL)
    test_fail_(file, line, "the failing call returned under the default handler: %s", err);
  if (strncmp(err, prefix, strlen(prefix)) != 0)
    test_fail_(file, line, "stderr does not start with \"%s\": \"%s\"", prefix, err);
  if (also != NULL && strstr(err, also) == NULL)
    test_fail_(file, line, "stderr lacks \"%s\": \"%s\"", also, err);
}

static void expect_exit0(const char *file, int line, int status, const char *err)
{
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    test_fail_(file, line, "child failed (status %d, exit %d); stderr: %s", status,
               WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
}

int main(int argc, char **argv)
{
  char err[8192];
  int status;

  if (argc < 2) {
    fprintf(stderr, "usage: %s BACKEND\n", argv[0]);
    return 2;
  }
  snprintf(backend_token, sizeof backend_token, "OP2_BACKEND=%s", argv[1]);
  unsetenv("OP2_ERROR_HANDLER");

  status = run_child(child_default, argv[0], err, sizeof err);
  expect_aborted(__FILE__, __LINE__, status, err, "op2 error [203]: op_decl_set 'nodes'", "-3");

  status = run_child(child_default_map, argv[0], err, sizeof err);
  expect_aborted(__FILE__, __LINE__, status, err, "op2 error [205]: op_decl_map 'badmap'", "5");

  status = run_child(child_default_uninit, argv[0], err, sizeof err);
  expect_aborted(__FILE__, __LINE__, status, err, "op2 error [101]: op_decl_set", "op_init");

  status = run_child(child_return_then_abort, argv[0], err, sizeof err);
  expect_aborted(__FILE__, __LINE__, status, err, "op2 error [203]: op_decl_set 'nodes'", "-4");

  status = run_child(child_token_return, argv[0], err, sizeof err);
  expect_exit0(__FILE__, __LINE__, status, err);

  status = run_child(child_env_return, argv[0], err, sizeof err);
  expect_exit0(__FILE__, __LINE__, status, err);

  return 0;
}
