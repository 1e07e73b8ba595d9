/* What is at a checkpoint's path is opened as op2 opens every input file (issue 37, point 3):
 * a FIFO there is OP2_ERR_IO at op_checkpointing_init at once (before, the plain open blocked
 * forever waiting for a writer), as are a directory, a symlink to a character device and a
 * symlink to a missing file (before, taken for "no checkpoint": a silent fresh start whose
 * first checkpoint then replaced the symlink). A FIFO or a symlink at op2's temporary name
 * (PATH.tmp) is replaced by the checkpoint written, never written through: the symlink's target
 * is untouched. The session goes on after each refusal. A watchdog alarm turns a hang into a
 * failure (it measures nothing: a loaded machine only takes longer). */
#include "test.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static void hung(int sig)
{
  (void)sig;
  static const char msg[] = "t951: a call blocked for 120 s (a FIFO opened with a blocking open?)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
  _exit(2);
}

static const char *src = "void inc(double *d) { *d += 1.0; }\n";

int main(int argc, char **argv)
{
  char dir[] = "/tmp/op2-t951-XXXXXX", path[256], tmp[256], missing[256], victim[256];
  double d0[4] = {1, 2, 3, 4}, out[4];
  struct stat st;
  int i;

  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/run.ck", dir);
  snprintf(tmp, sizeof tmp, "%s/run.ck.tmp", dir);
  snprintf(missing, sizeof missing, "%s/nowhere.ck", dir);
  snprintf(victim, sizeof victim, "%s/victim.txt", dir);
  signal(SIGALRM, hung);
  alarm(120);

  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  if (!op_checkpointing_init(path, 1e9, 0) && op_last_error_code() == OP2_ERR_BACKEND_UNAVAILABLE) {
    op_exit(); /* built without HDF5: no checkpoints */
    rmdir(dir);
    return 0;
  }
  CHECK_OK();
  op_exit();

  /* a FIFO with no writer at the checkpoint's path */
  CHECK(mkfifo(path, 0600) == 0);
  test_init(argc, argv);
  op_set_error_handler(OP_ERRORS_RETURN);
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 0);
  CHECK_ERR(OP2_ERR_IO, "op_checkpointing_init", path, "is a FIFO", "only regular files");
  CHECK(unlink(path) == 0);

  /* a directory */
  CHECK(mkdir(path, 0700) == 0);
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 0);
  CHECK_ERR(OP2_ERR_IO, "op_checkpointing_init", path, "is a directory");
  CHECK(rmdir(path) == 0);

  /* a symlink to a character device */
  CHECK(symlink("/dev/null", path) == 0);
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 0);
  CHECK_ERR(OP2_ERR_IO, "op_checkpointing_init", path, "is a character device");
  CHECK(unlink(path) == 0);

  /* a symlink to a missing file: there is something at the path, and it is unusable */
  CHECK(symlink(missing, path) == 0);
  CHECK_INT(op_checkpointing_init(path, 1e9, 0), 0);
  CHECK_ERR(OP2_ERR_IO, "op_checkpointing_init", path, "is a symlink to", "nowhere.ck", "cannot be opened");
  CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode)); /* left as it was */
  CHECK(access(missing, F_OK) != 0);
  CHECK(unlink(path) == 0);
  op_exit();

  op_set_error_handler(OP_ERRORS_ABORT);
  /* op2's temporary name holds a FIFO, then a symlink to a file of the user's: the checkpoint
   * is written as a new regular file and renamed into place; the target is untouched */
  for (i = 0; i < 2; i++) {
    FILE *v;
    if (i == 0) {
      CHECK(mkfifo(tmp, 0600) == 0);
    } else {
      v = fopen(victim, "w");
      CHECK(v != NULL);
      fputs("the user's file\n", v);
      fclose(v);
      CHECK(symlink(victim, tmp) == 0);
    }
    test_init(argc, argv);
    op_set s = op_decl_set(4, "s");
    op_dat d = op_decl_dat(s, 1, "double", d0, "d");
    op_kernel k = op_decl_kernel(src, "inc");
    CHECK_INT(op_checkpointing_init(path, 1e9, 0), 1);
    op_checkpoint_now();
    PAR_LOOP(k, "inc", s, op_arg_dat(d, -1, OP_ID, 1, "double", OP_RW));
    op_fetch_data(d, out);
    CHECK_DBL(out[3], 5.0);
    op_exit(); /* waits for the write */
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(access(tmp, F_OK) != 0);
    if (i == 1) {
      char *text = test_read_file(victim);
      CHECK(text != NULL && strcmp(text, "the user's file\n") == 0);
      free(text);
      CHECK(unlink(victim) == 0);
    }
    CHECK(unlink(path) == 0);
  }
  alarm(0);
  rmdir(dir);
  return 0;
}
