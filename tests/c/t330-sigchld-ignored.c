/* A program that sets SIGCHLD to SIG_IGN (children reaped by the kernel, waitpid fails with
 * ECHILD) can still JIT-compile loops; its disposition is SIG_IGN again afterwards, and so is
 * one with SA_NOCLDWAIT. */
#include "test.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[] = "/tmp/op2-t330-XXXXXX";

static void cleanup(void)
{
  char cmd[300];
  signal(SIGCHLD, SIG_DFL); /* system() waits for its shell */
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", base);
}

static void handler(int sig)
{
  (void)sig;
}

static void run_loop(int k)
{
  char src[128];
  int out[5];
  op_set s = op_decl_set(5, "s");
  op_dat y = op_decl_dat(s, 1, "int", NULL, "y");
  snprintf(src, sizeof src, "void t330_fill(int *y, const int *i) { *y = *i + %d; }\n", k);
  op_kernel kern = op_decl_kernel(src, "t330_fill");
  PAR_LOOP(kern, "t330_fill", s, op_arg_dat(y, -1, OP_ID, 1, "int", OP_WRITE),
           op_arg_idx(-1, OP_ID));
  CHECK_OK();
  op_fetch_data(y, out);
  CHECK_INT(out[0], k);
  CHECK_INT(out[4], 4 + k);
}

int main(int argc, char **argv)
{
  struct sigaction sa, now;
  char cache[300];

  if (argc < 2) return 2;
  CHECK(mkdtemp(base) != NULL);
  atexit(cleanup);
  snprintf(cache, sizeof cache, "%s/cache", base);
  setenv("OP2_CACHE_DIR", cache, 1); /* empty: every loop compiles */
  op_set_error_handler(OP_ERRORS_RETURN);

  CHECK(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
  test_init(argc, argv);
  CHECK_OK();
  run_loop(7);
  CHECK(sigaction(SIGCHLD, NULL, &now) == 0);
  CHECK(now.sa_handler == SIG_IGN);

  /* A handler with SA_NOCLDWAIT also reaps children automatically. */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_NOCLDWAIT;
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
  run_loop(9);
  CHECK(sigaction(SIGCHLD, NULL, &now) == 0);
  CHECK(now.sa_handler == handler && (now.sa_flags & SA_NOCLDWAIT) != 0);
  op_exit();
  return 0;
}
