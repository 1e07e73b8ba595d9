/* A checkpoint write that fails reaches the program (issue 37, point 2). The write is made to
 * fail deterministically: a directory stands at op2's temporary name PATH.tmp, so the
 * background writer (one process) fails at once with OP2_ERR_IO naming it.
 *  - A write still pending at op_exit: op_exit's own error (before, op_exit returned success and
 *    the error went to stderr only, so the program believed its checkpoint existed); the
 *    session ends all the same (op_init works again).
 *  - A failure found earlier: the error of the next loop that checkpoints (it waits for the
 *    previous write first); op_exit then has nothing left to report.
 *  - With the default handler, op_exit's failure ends the program non-zero, the message on
 *    stderr naming the file (in a forked child). */
#include "test.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *src = "void inc(double *d) { *d += 1.0; }\n";
static char dir[] = "/tmp/op2-t952-XXXXXX";
static char path[256], tmp[256], errlog[256];

/* One session: a checkpoint asked for before the first loop, `loops` loops. Returns whether
 * op_checkpointing_init turned checkpointing on (0 without HDF5). */
static int session(int argc, char **argv, int loops)
{
  double d0[4] = {1, 2, 3, 4};
  int i, on;
  test_init(argc, argv);
  op_set s = op_decl_set(4, "s");
  op_dat d = op_decl_dat(s, 1, "double", d0, "d");
  op_kernel k = op_decl_kernel(src, "inc");
  on = op_checkpointing_init(path, 1e9, 0);
  if (!on) return 0;
  op_checkpoint_now();
  for (i = 0; i < loops; i++) {
    PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
  }
  return 1;
}

int main(int argc, char **argv)
{
  pid_t child;
  int status;
  char *text;

  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/run.ck", dir);
  snprintf(tmp, sizeof tmp, "%s/run.ck.tmp", dir);
  snprintf(errlog, sizeof errlog, "%s/stderr.txt", dir);
  CHECK(mkdir(tmp, 0700) == 0);

  /* the default handler: a child whose stderr goes to a file */
  fflush(NULL);
  child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    FILE *e = freopen(errlog, "w", stderr);
    if (e == NULL) _exit(90);
    if (!session(argc, argv, 1)) _exit(91); /* no HDF5: nothing to test */
    op_exit();
    _exit(0); /* op_exit returned: its failure did not end the program */
  }
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  if (WEXITSTATUS(status) == 91) { /* built without HDF5 */
    unlink(errlog);
    rmdir(tmp);
    rmdir(dir);
    return 0;
  }
  CHECK(WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 90);
  text = test_read_file(errlog);
  CHECK(text != NULL);
  if (strstr(text, "op2 error [") == NULL || strstr(text, "op_exit: checkpoint") == NULL ||
      strstr(text, "run.ck.tmp") == NULL)
    test_fail_(__FILE__, __LINE__, "the child's stderr does not name op_exit's failure: \"%s\"", text);
  free(text);
  CHECK(access(path, F_OK) != 0);

  /* OP_ERRORS_RETURN: op_exit's error */
  op_set_error_handler(OP_ERRORS_RETURN);
  CHECK_INT(session(argc, argv, 1), 1);
  CHECK_OK();
  op_exit();
  CHECK_ERR(OP2_ERR_IO, "op_exit", "checkpoint", path, "was not written", "run.ck.tmp", "a directory is in the way");
  CHECK(access(path, F_OK) != 0);
  CHECK(op_decl_set(1, "x") == NULL); /* the session ended all the same */
  CHECK_INT(op_last_error_code(), OP2_ERR_NOT_INITIALISED);

  /* a failure found before op_exit: the next loop that checkpoints reports it */
  CHECK_INT(session(argc, argv, 1), 1);
  CHECK_OK();
  {
    op_set s = op_decl_set(2, "s2");
    op_dat d = op_decl_dat(s, 1, "double", NULL, "d2");
    op_kernel k = op_decl_kernel(src, "inc");
    op_checkpoint_now();
    PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
    CHECK_ERR(OP2_ERR_IO, "op_par_loop 'inc'", "checkpoint", path, "was not written", "run.ck.tmp");
  }
  op_exit();
  CHECK_OK();

  /* the way cleared, the same program writes its checkpoint and op_exit succeeds */
  CHECK(rmdir(tmp) == 0);
  CHECK_INT(session(argc, argv, 1), 1);
  op_exit();
  CHECK_OK();
  CHECK(access(path, R_OK) == 0);

  unlink(path);
  unlink(errlog);
  rmdir(dir);
  return 0;
}
